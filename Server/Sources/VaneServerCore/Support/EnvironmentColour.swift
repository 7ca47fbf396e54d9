import Foundation

/// The colour people tell an environment apart by (production red, staging amber…). A named
/// colour from a palette, not any hex value: each has a background and a text colour that
/// reach WCAG AA contrast (4.5:1) together, and the console styles it with a class of its own
/// stylesheet (its Content-Security-Policy allows no inline styles).
package enum EnvironmentColour: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case red, orange, yellow, green, teal, blue, purple, pink, grey

    /// Reads a colour's name.
    /// - Throws: ``EnvironmentColourError`` for a name not in the palette.
    package init(name: String) throws(EnvironmentColourError) {
        guard let colour = EnvironmentColour(rawValue: name.trimmingCharacters(in: .whitespaces).lowercased()) else {
            throw EnvironmentColourError(text: String(name.prefix(40)))
        }
        self = colour
    }

    package var description: String { rawValue }

    /// The bar's background, `#rrggbb`.
    package var background: String {
        switch self {
        case .red: "#b42318"
        case .orange: "#c4320a"
        case .yellow: "#fedf89"
        case .green: "#067647"
        case .teal: "#0e7090"
        case .blue: "#175cd3"
        case .purple: "#6941c6"
        case .pink: "#c11574"
        case .grey: "#475467"
        }
    }

    /// The text on it, `#rrggbb`.
    package var text: String {
        switch self {
        case .yellow: "#000000"
        default: "#ffffff"
        }
    }

    /// WCAG 2's contrast ratio of the text on the background.
    package var contrast: Double {
        let (a, b) = (Self.luminance(background), Self.luminance(text))
        return (max(a, b) + 0.05) / (min(a, b) + 0.05)
    }

    /// WCAG 2's relative luminance of `#rrggbb`.
    static func luminance(_ hex: String) -> Double {
        let value = UInt32(hex.dropFirst(), radix: 16) ?? 0
        func linear(_ shift: UInt32) -> Double {
            let channel = Double((value >> shift) & 0xff) / 255
            return channel <= 0.039_28 ? channel / 12.92 : pow((channel + 0.055) / 1.055, 2.4)
        }
        return 0.2126 * linear(16) + 0.7152 * linear(8) + 0.0722 * linear(0)
    }
}

/// A colour name not in the palette.
package struct EnvironmentColourError: Error, Sendable, Equatable, CustomStringConvertible {
    let text: String

    package var description: String {
        let names = EnvironmentColour.allCases.map(\.rawValue).joined(separator: ", ")
        return "an environment's colour is one of \(names), not \"\(text)\""
    }
}
