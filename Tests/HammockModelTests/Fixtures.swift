import Foundation
import HammockModel

struct Product: Equatable, Sendable {
    var sku = ""
    var name = ""
    var price: Double? = nil
    var tags: [String] = []
}

enum Status: String, Sendable { case active, retired }

struct Owner: Equatable, Sendable {
    var name = ""
    var email: String? = nil
}

struct Listing: Equatable, Sendable {
    var id = 0
    var released: Date? = nil
    var homepage: URL? = nil
    var status: Status = .active
    var stock = 0
    var owner = Owner()
    var previousOwners: [Owner] = []
}

enum Recipes {
    /// The shape of a REST API.
    static func restAPI() throws(ModelError) -> Recipe<Product> {
        try Recipe<Product>(name: "ProductJSON") {
            Field("sku", \.sku, at: "base_sku")
            Field("name", \.name, at: "attributes.name")
            Field("price", \.price, at: "offers[0].price")
            Field("tags", \.tags, at: "attributes.tags")
        }
    }

    static func owner() throws(ModelError) -> Recipe<Owner> {
        try Recipe<Owner>(name: "Owner") {
            Field("name", \.name, at: "name")
            Field("email", \.email, at: "contact.email")
        }
    }
}
