import HammockJSON
import HammockStore
import Testing

extension StoreContract {
    /// Queries a store answers itself (from indexes, or in SQL) must answer as the reference does:
    /// `ListQuery.apply(to:schema:)` over every record, the default of `MockStore`.
    static let queries: [Check] = [
        Check("List queries give the records, order and total that the reference evaluation gives") {
            (subject: Subject) async throws in
            let store = subject.store
            for slug in ["tools", "garden", "Éte", "a%b"] {
                _ = try await store.createRecord(of: subject.categories, with: ["slug": .string(slug), "title": .string(slug)])
            }
            let names = ["hammock", "Hammock XL", "rope", "net", "", "stand", "hämmock", "ROPE", "a%b", "a_b"]
            var products: [JSONObject] = []
            for index in 0..<60 {
                var values: JSONObject = [
                    "name": index % 11 == 0 ? .null : .string(names[index % names.count]),
                    "price": index % 7 == 0 ? .null : .double(Double(index % 9) * 2.5 - 5),
                    "inStock": index % 5 == 0 ? .null : .bool(index % 2 == 0),
                    "releasedOn": .string("2024-0\(index % 9 + 1)-1\(index % 10)T10:00:00Z"),
                    "category_id": index % 4 == 3 ? .null : .string(["tools", "garden", "Éte"][index % 3]),
                ]
                if index % 13 == 0 { values["details"] = ["n": .integer(index)] }
                products.append(values)
            }
            _ = try await store.createRecords(of: subject.products, with: products)
            let queries = [
                "", "name=rope", "name=rope&name=net", "name_ne=rope", "name_like=ham", "name_like=HAM%25",
                "name_like=a%25b", "name_like=%25_%25", "price_gt=2.5", "price_gte=0&price_lt=10", "price_lte=-5",
                "price_null=true", "price_null=false", "inStock=true", "inStock_ne=true", "category_id=garden",
                "category_id_null=true", "q=ROPE", "q=hä", "_sort=price", "_sort=-price,name", "_sort=name,-id",
                "_sort=inStock,-releasedOn", "_page=2&_per_page=7", "_sort=-price&_page=3&_per_page=5",
                "_start=5&_end=12", "_start=50&_limit=30", "_start=70", "name_like=ham&_sort=-price&_start=1&_limit=3",
                "id_gt=10&id_lte=20&_sort=-id", "id=3&id=30&id=300", "releasedOn_gte=2024-05-01&_sort=releasedOn",
                "price_ne=0&price_ne=2.5&_sort=price", "name=&_sort=id",
            ]
            let everything = try await store.storedRecords(of: subject.products)
            #expect(everything.count == 60)
            for text in queries {
                let query = try ListQuery(parsing: text, for: subject.products)
                let expected = query.apply(to: everything, schema: subject.products)
                let answered = try await store.storedRecords(of: subject.products, answering: query)
                #expect(answered.total == expected.total, "?\(text)")
                #expect(answered.page.map(\.fields) == expected.page.map(\.fields), "?\(text)")
                #expect(answered.page.map(\.json) == expected.page.map(\.json), "?\(text)")
            }
            // A write between two queries is seen by the next one (no answer kept from before it).
            let query = try ListQuery(parsing: "name=rope", for: subject.products)
            let before = try await store.storedRecords(of: subject.products, answering: query).total
            _ = try await store.createRecord(of: subject.products, with: ["name": "rope"])
            _ = try await store.updateRecord(of: subject.products, withKey: 1, with: ["name": "rope"])
            let after = try await store.storedRecords(of: subject.products, answering: query).total
            #expect(after == before + 2)
        }
    ]
}
