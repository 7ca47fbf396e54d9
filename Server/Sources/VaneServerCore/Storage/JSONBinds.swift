package import SQLKit
import VaneCore

/// Many values bound as one parameter: a JSON array the database takes apart (`jsonb_each` and
/// `json_each` on SQLite, `jsonb_array_elements` on PostgreSQL).
///
/// Event batches bind hundreds of rows. One parameter per column per row made the statements
/// slow to build, bind and parse (the text of a 400-event insert held 5,600 placeholders); a
/// JSON array is written in one pass and read by the database in C.
package enum JSONBinds {
    /// How a JSON column becomes an SQL value. SQLite keeps the JSON type (`->>` gives text,
    /// integer or real); PostgreSQL's `->>` gives text, which is cast.
    package enum ColumnType {
        case text, integer, real
    }

    /// `SELECT constants…, row[0], row[1], … FROM` the rows of `rows`, a JSON array of arrays
    /// with one element per entry of `columns`, for `INSERT INTO table (…) <select>`.
    package static func select(
        constants: [any Encodable & Sendable],
        columns: [ColumnType],
        rows: String,
        kind: DatabaseEngine.Kind
    ) -> SQLQueryString {
        let values: [SQLQueryString] = columns.enumerated().map { index, type in
            let element = String(index)
            switch (kind, type) {
            case (.sqlite, _): return "value ->> \(unsafeRaw: element)"
            case (.postgres, .text): return "e ->> \(unsafeRaw: element)"
            case (.postgres, .integer): return "(e ->> \(unsafeRaw: element))::bigint"
            case (.postgres, .real): return "(e ->> \(unsafeRaw: element))::double precision"
            }
        }
        let list = ([SQLQueryString("\(binds: constants)")] + values).joined(separator: ", ")
        switch kind {
        case .sqlite:
            // `jsonb_each` gives each row as SQLite's binary JSON, which `->>` reads in place;
            // `json_each` gave it as text, which each `->>` parsed again (a quarter of the insert).
            // `WHERE true` tells SQLite's parser that a following ON CONFLICT belongs to the INSERT.
            return "SELECT \(list) FROM jsonb_each(\(bind: rows)) WHERE true"
        case .postgres:
            return "SELECT \(list) FROM jsonb_array_elements(\(bind: rows)::jsonb) AS e"
        }
    }

    /// `column IN (strings)` with the strings bound as one JSON array.
    package static func column(
        _ column: String,
        in strings: some Sequence<String>,
        kind: DatabaseEngine.Kind
    ) -> SQLQueryString {
        var writer = JSONWriter()
        writer.beginArray()
        for string in strings { writer.string(string) }
        writer.endArray()
        let list = String(decoding: writer.bytes, as: UTF8.self)
        switch kind {
        case .sqlite:
            return "\(ident: column) IN (SELECT value FROM json_each(\(bind: list)))"
        case .postgres:
            // An array rather than a subquery: PostgreSQL then searches the index once per value.
            return "\(ident: column) = ANY(ARRAY(SELECT jsonb_array_elements_text(\(bind: list)::jsonb)))"
        }
    }
}
