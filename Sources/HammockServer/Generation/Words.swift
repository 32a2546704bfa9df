/// The word lists generated records draw from: small, ASCII (so emails and usernames stay plain), and
/// enough for values that look real in a front end.
enum Words {
    static let firstNames = [
        "Amy", "Ben", "Carla", "Dev", "Elena", "Farid", "Grace", "Hugo", "Iris", "Jonas", "Kira", "Leo", "Maya", "Nils",
        "Olga", "Pablo", "Quinn", "Rosa", "Sami", "Tara", "Umar", "Vera", "Wen", "Ximena", "Yusuf", "Zoe", "Aiko",
        "Bruno", "Chloe", "Dmitri", "Esme", "Felix", "Gita", "Hana", "Ivan", "June", "Kofi", "Lena", "Marco", "Nadia",
    ]

    static let lastNames = [
        "Lee", "Garcia", "Smith", "Novak", "Okafor", "Tanaka", "Moreau", "Rossi", "Kowalski", "Haddad", "Johansson",
        "Silva", "Nguyen", "Patel", "Cohen", "Fischer", "Kim", "Larsen", "Mendes", "Park", "Quispe", "Reyes", "Sato",
        "Torres", "Usman", "Vargas", "Walsh", "Xu", "Young", "Zhang", "Abbott", "Becker", "Costa", "Diaz", "Evans",
        "Ferreira", "Gomez", "Hughes", "Ito", "Jensen",
    ]

    static let cities = [
        "Lisbon", "Osaka", "Nairobi", "Toronto", "Krakow", "Lima", "Oslo", "Seoul", "Austin", "Porto", "Lyon", "Hanoi",
        "Accra", "Denver", "Tbilisi", "Cork", "Bergen", "Quito", "Perth", "Tallinn", "Malmo", "Ghent", "Cusco", "Leeds",
        "Kyoto", "Dakar", "Boise", "Turin", "Split", "Galway",
    ]

    static let countries = [
        "Portugal", "Japan", "Kenya", "Canada", "Poland", "Peru", "Norway", "South Korea", "United States", "France",
        "Vietnam", "Ghana", "Georgia", "Ireland", "Ecuador", "Australia", "Estonia", "Sweden", "Belgium", "Italy",
        "Croatia", "Senegal", "Chile", "Iceland", "Mexico",
    ]

    static let streets = [
        "Harbor", "Maple", "Station", "Mill", "Orchard", "Church", "Bridge", "River", "Hill", "Garden", "Market", "Park",
        "Lake", "Cedar", "Meadow", "King", "Queen", "Elm", "Willow", "Forest",
    ]

    static let streetKinds = ["Street", "Avenue", "Road", "Lane", "Way", "Place"]

    static let companyKinds = ["Labs", "Works", "Group", "Systems", "Studio", "Partners", "Supply", "Foods"]

    static let colors = [
        "red", "blue", "green", "yellow", "black", "white", "silver", "orange", "purple", "teal", "navy", "maroon",
        "olive", "gray", "pink", "brown",
    ]

    static let words = [
        "amber", "anchor", "arrow", "autumn", "basil", "beacon", "birch", "bloom", "breeze", "brook", "canyon", "cedar",
        "cloud", "coast", "comet", "copper", "coral", "crane", "dawn", "delta", "ember", "falcon", "fern", "field",
        "flint", "forest", "frost", "garden", "glade", "granite", "harbor", "hazel", "horizon", "island", "ivory",
        "jasper", "lantern", "maple", "meadow", "mint", "moss", "north", "oak", "ocean", "orbit", "pebble", "pine",
        "prairie", "quiet", "rain", "raven", "ridge", "river", "saffron", "sage", "shore", "silver", "spark", "spring",
        "stone", "summit", "thistle", "valley", "willow",
    ]

    /// Resources whose `name` is a person's.
    static let personResources: Set<String> = [
        "people", "persons", "users", "customers", "authors", "employees", "members", "students", "contacts",
        "players", "patients", "friends", "owners", "teachers", "staff", "drivers", "accounts", "profiles",
    ]
}
