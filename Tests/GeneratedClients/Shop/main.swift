// Every route of Examples/shop.json through the client `hammock generate swift` makes of it: a key the
// client chooses (categories' slug), JSON and date members, a parent named by another foreign key.
import Foundation
import HammockClient

let api = ShopClient(client: RestClient(baseURL: baseURL()))

let categories = try await api.listCategories()
expect(Set(categories.map(\.slug)) == ["tools", "garden"], "two categories")
let sorted = try await api.listCategories(_page: nil, _per_page: nil, _sort: "slug", _order: nil, q: nil, slug: nil, title: nil)
expect(sorted.map(\.slug) == ["garden", "tools"], "sorted by slug")
expect(try await api.getCategory(slug: "garden").title == "Garden", "the garden")
let toys = try await api.createCategory(category: CategoryCreate(slug: "toys", title: "Toys"))
expect(toys.slug == "toys", "a category with the slug chosen")
await expectStatus(409) { _ = try await api.createCategory(category: CategoryCreate(slug: "toys")) }
expect(try await api.replaceCategory(slug: "toys", category: CategoryUpdate(title: "Games")).title == "Games", "PUT")
expect(try await api.updateCategory(slug: "toys", category: CategoryUpdate(title: "Toys")).title == "Toys", "PATCH")

let products = try await api.listProducts()
expect(products.first?.details == ["colors": ["green", "sand"]], "JSON member: \(String(describing: products.first?.details))")
expect(products.first?.releasedOn == "2024-05-01", "a date member")
let inStock = try await api.listProducts(
    _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, name: nil, price: nil, inStock: true, releasedOn: nil,
    category_id: nil)
expect(inStock.map(\.name) == ["Hammock"], "in stock")
let kite = try await api.createCategoryProduct(
    categorySlug: "toys", product: ProductCreate(name: "Kite", price: 19.5, details: ["tail": true]))
expect(kite.category_id == "toys" && kite.details == ["tail": true] && kite.inStock == false, "a product in a category: \(kite)")
let garden = try await api.listCategoryProducts(
    categorySlug: "garden", _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, name: nil, price: nil,
    inStock: nil, releasedOn: nil)
expect(garden.map(\.name) == ["Hammock"], "the garden's products")
let spade = try await api.createProduct(product: ProductCreate(name: "Spade", releasedOn: "2025-02-01"))
expect(try await api.getProduct(id: spade.id).releasedOn == "2025-02-01", "a product read back")
expect(try await api.replaceProduct(id: spade.id, product: ProductUpdate(price: 30)).price == 30, "PUT a product")
expect(try await api.updateProduct(id: spade.id, product: ProductUpdate(inStock: true)).inStock == true, "PATCH a product")

let reviews = try await api.listReviews()
expect(reviews.first?.stars == 5, "a five-star review")
let review = try await api.createProductReview(productId: kite.id, review: ReviewInput(stars: 4, text: "Flies."))
expect(review.product == kite.id, "a review of the kite")
expect(try await api.getReview(id: review.id).text == "Flies.", "the review read back")
let kiteReviews = try await api.listProductReviews(
    productId: kite.id, _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, stars: nil, text: nil)
expect(kiteReviews.count == 1, "one review of the kite")
expect(try await api.createReview(review: ReviewInput(stars: 3, product: spade.id)).stars == 3, "a review by its foreign key")

try await api.deleteProduct(id: spade.id)
await expectStatus(404) { _ = try await api.getProduct(id: spade.id) }
try await api.deleteCategory(slug: "toys")
await expectStatus(404) { _ = try await api.getCategory(slug: "toys") }

print("shop: 19 routes called, \(checked) promises kept")
