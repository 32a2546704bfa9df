// Every route of Examples/people.json through the client `hammock generate swift` makes of it.
import Foundation
import HammockClient

let api = PeopleClient(client: RestClient(baseURL: baseURL()))

let people = try await api.listPeople()
expect(people.map(\.name) == ["Amy Lee", "Jonas Novak", "Rosa Garcia", "Kofi Okafor", "Hana Tanaka"], "the five people")
let page = try await api.listPeople(
    _page: 2, _per_page: 2, _sort: "name", _order: "desc", q: nil, id: nil, name: nil, numberOfKids: nil,
    kilometersWalked: nil)
expect(page.map(\.name) == ["Jonas Novak", "Hana Tanaka"], "page 2 of 2, by name descending: \(page.map(\.name))")
let parents = try await api.listPeople(
    _page: nil, _per_page: nil, _sort: nil, _order: nil, q: "o", id: nil, name: nil, numberOfKids: 0, kilometersWalked: nil)
expect(parents.map(\.name) == ["Jonas Novak"], "q and a filter: \(parents.map(\.name))")
let amy = try await api.getPerson(id: 1)
expect(amy.kilometersWalked == 412.5, "Amy walked 412.5 km")

let ada = try await api.createPerson(person: PersonInput(name: "Ada", numberOfKids: 1, avatar: Data([0, 1, 254, 255])))
expect(ada.id == 6 && ada.avatar == Data([0, 1, 254, 255]) && ada.kilometersWalked == nil, "Ada created: \(ada)")
let replaced = try await api.replacePerson(id: ada.id, person: PersonInput(numberOfKids: 2))
expect(replaced.numberOfKids == 2 && replaced.name == "Ada", "PUT merges: \(replaced)")
let updated = try await api.updatePerson(id: ada.id, person: PersonInput(kilometersWalked: 3.5))
expect(updated.kilometersWalked == 3.5 && updated.numberOfKids == 2, "PATCH: \(updated)")

let cars = try await api.listCars()
expect(cars.count == 5, "five cars")
let amysCars = try await api.listPersonCars(
    personId: 1, _page: nil, _per_page: nil, _sort: "name", _order: nil, q: nil, id: nil, name: nil, color: nil)
expect(amysCars.map(\.name) == ["Beetle", "Model 3"], "Amy's cars: \(amysCars.map(\.name))")
let filtered = try await api.listCars(
    _page: nil, _per_page: nil, _sort: nil, _order: nil, q: nil, id: nil, name: nil, color: "blue", person_id: nil)
expect(filtered.map(\.name) == ["Golf"], "the blue car")
let zoe = try await api.createPersonCar(personId: ada.id, car: CarInput(name: "Zoe", color: "green"))
expect(zoe.person_id == ada.id, "a car of Ada's, through the nested route")
let spare = try await api.createCar(car: CarInput(name: "Spare"))
expect(try await api.getCar(id: spare.id).name == "Spare", "the spare car")
expect(try await api.replaceCar(id: spare.id, car: CarInput(color: "grey")).color == "grey", "PUT a car")
expect(try await api.updateCar(id: spare.id, car: CarInput(person_id: ada.id)).person_id == ada.id, "PATCH a car")
try await api.deleteCar(id: spare.id)
await expectStatus(404) { _ = try await api.getCar(id: spare.id) }
try await api.deletePerson(id: ada.id)
await expectStatus(404) { _ = try await api.getPerson(id: ada.id) }
await expectStatus(422) { _ = try await api.createCar(car: CarInput(person_id: 999)) }

print("people: 14 routes called, \(checked) promises kept")
