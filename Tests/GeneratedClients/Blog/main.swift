// Every route of Examples/generated.json (made-up records, seed 1) through the client `hammock generate
// swift` makes of it: three levels of parents.
import Foundation
import HammockClient

let api = BlogClient(client: RestClient(baseURL: baseURL()))

let users = try await api.listUsers()
expect(users.count == 50, "fifty users made up")
let page = try await api.listUsers(
    _page: 1, _per_page: 10, _sort: "age", _order: "desc", q: nil, id: nil, name: nil, email: nil, age: nil, city: nil,
    createdAt: nil, active: nil)
expect(page.count == 10 && zip(page, page.dropFirst()).allSatisfy { ($0.age ?? 0) >= ($1.age ?? 0) }, "ten, oldest first")
let first = try await api.getUser(id: 1)
expect(first.email?.contains("@") == true, "a made-up email: \(String(describing: first.email))")

let posts = try await api.listPosts()
expect(posts.count == 200, "two hundred posts")
let popular = try await api.listPosts(
    _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, title: nil, body: nil, likes: nil, publishedOn: nil,
    user_id: 1)
let firstsPosts = try await api.listUserPosts(
    userId: 1, _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, title: nil, body: nil, likes: nil,
    publishedOn: nil)
expect(popular.map(\.id) == firstsPosts.map(\.id), "a filter and the nested route agree")
let comments = try await api.listComments()
expect(comments.count == 600 && comments.allSatisfy { (1...5).contains($0.stars ?? 0) }, "six hundred comments of 1 to 5 stars")
let onFirstPost = try await api.listPostComments(
    postId: posts[0].id, _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, text: nil, stars: nil)
expect(onFirstPost.allSatisfy { $0.post_id == posts[0].id }, "the first post's comments")

let ada = try await api.createUser(user: UserInput(name: "Ada", age: 36, createdAt: "2026-11-26T12:00:00Z", active: true))
expect(try await api.getUser(id: ada.id).createdAt == "2026-11-26T12:00:00Z", "a date-time member")
expect(try await api.replaceUser(id: ada.id, user: UserInput(city: "London")).city == "London", "PUT a user")
expect(try await api.updateUser(id: ada.id, user: UserInput(age: 37)).age == 37, "PATCH a user")
let post = try await api.createUserPost(userId: ada.id, post: PostInput(title: "Notes", likes: 0))
expect(post.user_id == ada.id, "a post of Ada's")
let loose = try await api.createPost(post: PostInput(title: "Loose"))
expect(try await api.getPost(id: loose.id).title == "Loose", "a post read back")
expect(try await api.replacePost(id: loose.id, post: PostInput(likes: 3)).likes == 3, "PUT a post")
expect(try await api.updatePost(id: loose.id, post: PostInput(publishedOn: "2026-01-02")).publishedOn == "2026-01-02", "PATCH")
let comment = try await api.createPostComment(postId: post.id, comment: CommentInput(text: "First!", stars: 5))
expect(comment.post_id == post.id, "a comment on Ada's post")
let other = try await api.createComment(comment: CommentInput(text: "Hm", post_id: loose.id))
expect(try await api.getComment(id: other.id).text == "Hm", "a comment read back")
expect(try await api.replaceComment(id: other.id, comment: CommentInput(stars: 2)).stars == 2, "PUT a comment")
expect(try await api.updateComment(id: other.id, comment: CommentInput(text: "Hmm")).text == "Hmm", "PATCH a comment")
try await api.deleteComment(id: other.id)
try await api.deletePost(id: loose.id)
try await api.deleteUser(id: ada.id)
await expectStatus(404) { _ = try await api.getUser(id: ada.id) }

print("blog: 22 routes called, \(checked) promises kept")
