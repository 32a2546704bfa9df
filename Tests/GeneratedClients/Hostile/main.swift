// Tests/OpenAPI/documents/hostile-names.json: paths, names and members that try to end their string
// literal or comment and run code (`/p")\n#error("pwned")`, a member `x"\n#error("member")`, a resource
// `things")`, members `init`, `self`, `first-name` beside `firstName`). The client compiles, and every
// route still reaches the mock.
import Foundation
import HammockClient

let api = HostileClient(client: RestClient(baseURL: baseURL()))

let things = try await api.listThings()
expect(things.count == 10, "ten made-up records of things\")")
let made = try await api.createThings(things: ThingsInput(init_: "a", firstName: "Ada", xErrorMember: "b", boom: "c"))
expect(
    made.init_ == "a" && made.firstName == "Ada" && made.xErrorMember == "b" && made.boom == "c", "members by their JSON names")
expect(try await api.getPErrorPwned() == ["a": 1], "the stub behind the hostile path")
print("Hostile: \(checked) promises kept")
