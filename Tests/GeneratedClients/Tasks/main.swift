// Every route of Tests/OpenAPI/documents/tasks.yaml, an OpenAPI document, through the client `hammock
// generate swift` makes of the mock `hammock serve` makes of it: resources with a UUID key and a nested
// list, and the operations that became stubs.
import Foundation
import HammockClient

// The document asks for a bearer token; the mock lets in any well-formed one.
let api = TasksClient(client: RestClient(baseURL: baseURL(), defaultHeaders: ["Authorization": "Bearer test-token"]))
let launch = "6f1d2c3b-8a7e-4d5c-9b0a-112233445566"

let projects = try await api.listProjects()
expect(Set(projects.map(\.name)) == ["Launch", "Hiring"], "the documented projects")
let archived = try await api.listProjects(
    _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, name: nil, archived: true, createdAt: nil)
expect(archived.map(\.name) == ["Hiring"], "the archived one")
expect(try await api.getProject(id: launch).createdAt == "2026-03-01T08:00:00Z", "Launch, from its example")
// A project's key is read-only in the document: the mock makes it (a UUID), and a create has no `id` to send.
let audit = try await api.createProject(project: ProjectCreate(name: "Audit"))
expect(UUID(uuidString: audit.id) != nil && audit.archived == false, "a project with a key made, a default")
expect(try await api.replaceProject(id: audit.id, project: ProjectUpdate(archived: false)).archived == false, "PUT a project")
expect(try await api.updateProject(id: audit.id, project: ProjectUpdate(name: "Audit 2026")).name == "Audit 2026", "PATCH")

// The document lists tasks only under their project: there is no `/tasks` list or create.
func tasks(of project: String, status: String? = nil) async throws -> [TaskRecord] {
    try await api.listProjectTasks(
        projectId: project, _page: nil, _per_page: 100, _sort: nil, _order: nil, q: nil, id: nil, title: nil, status: status,
        dueOn: nil, estimate: nil, callbackUrl: nil)
}
let hiring = "0a9b8c7d-6e5f-4a3b-8c2d-998877665544"
let launchTasks = try await tasks(of: launch)
expect(launchTasks.count + (try await tasks(of: hiring)).count == 10, "ten tasks made up from the schema")
expect(launchTasks.allSatisfy { ["todo", "doing", "done"].contains($0.status ?? "") }, "with documented statuses")
expect(launchTasks.allSatisfy { $0.projectId == launch }, "Launch's tasks")
let done = try await tasks(of: launch, status: "done")
expect(done.allSatisfy { $0.status == "done" }, "a filter by status")
let notes = try await api.createProjectTaskRecord(
    projectId: audit.id, taskRecord: TaskRecordCreate(title: "Write the notes", status: "todo", labels: ["docs"]))
expect(notes.projectId == audit.id && notes.labels == ["docs"], "a task in the audit: \(notes)")
let loose = try await api.createProjectTaskRecord(
    projectId: launch, taskRecord: TaskRecordCreate(title: "Loose end", estimate: 2))
expect(try await api.getTaskRecord(id: loose.id).estimate == 2, "a task read back")
expect(
    // The document's PUT replaces the whole task, so it requires the title as the create does (the mock checks).
    try await api.replaceTaskRecord(id: loose.id, taskRecord: TaskRecordUpdate(title: "Loose end", dueOn: "2026-12-24")).dueOn
        == "2026-12-24", "PUT")
expect(try await api.updateTaskRecord(id: loose.id, taskRecord: TaskRecordUpdate(status: "doing")).status == "doing", "PATCH")
try await api.deleteTaskRecord(id: loose.id)
await expectStatus(404) { _ = try await api.getTaskRecord(id: loose.id) }
try await api.deleteProject(id: audit.id)
expect(try await api.getTeam(id: 1).name == "Platform", "a team, from its example")
// The teams' list answers in the document's envelope, as JSON.
expect(try await api.listTeams()["data"]?.arrayValue?.count == 2, "the teams' envelope")

// The stubs: documented examples, or bodies made from the schema.
expect(try await api.postTasksByTaskIdComplete(taskId: "7")["status"] == "done", "completing answers the example")
expect(try await api.getTasksByTaskIdComments(taskId: "7")[0]?["replies"] != nil, "a comment thread made from the schema")
expect(try await api.getMe()["plan"] == "team", "who I am")
expect(try await api.getHealth() == Data("ok".utf8), "healthy, as text")
// The document requires `q` of a search: the client takes it, and the mock's check of the document holds.
expect(try await api.getSearch(q: "be")["hits"]?[0]?["kind"] == "project", "a search with its query")
await expectStatus(400) { _ = try await api.getSearch(q: "b") }
try await api.postExports()

print("tasks: 20 routes called, \(checked) promises kept")
