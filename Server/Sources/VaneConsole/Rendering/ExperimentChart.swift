import Foundation
import VaneServerCore

/// A forest plot drawn on the server as SVG: each treatment's difference from control, a dot
/// with its interval, beside a line at zero. No chart library, no script: the
/// page works air-gapped and the same figures are in the table next to it.
///
/// The colours come from CSS classes (`chart-up`, `chart-down`, `chart-flat`): an interval that
/// excludes zero is drawn as a change up or down, one that includes it as no clear change.
enum ExperimentChart {
    /// How differences read: a difference of rates in percentage points, or of means and
    /// ratios as plain numbers.
    enum Scale: Sendable, Equatable {
        /// 0.05 is `+5.0 pp`.
        case percentagePoints
        /// With this many decimals.
        case number(decimals: Int)

        /// `+5.0 pp`, `−0.25`, `0`.
        func format(_ value: Double) -> String {
            guard value.isFinite else { return value > 0 ? "+∞" : "−∞" }
            let (scaled, decimals, suffix) =
                switch self {
                case .percentagePoints: (value * 100, 1, " pp")
                case .number(let decimals): (value, decimals, "")
                }
            let text = String(format: "%.\(decimals)f", abs(scaled))
            if Double(text) == 0 { return "0" + suffix }
            return (scaled > 0 ? "+" : "−") + text + suffix
        }
    }

    /// One treatment; bounds may be infinite (an always-valid interval is unbounded until
    /// enough units arrived).
    struct Row: Sendable, Equatable {
        var label: String
        var estimate: Double
        var lower: Double
        var upper: Double
    }

    // Labels above their line. The page carries the chart drawn at three widths and shows the
    // one closest to the card's (``responsive(rows:scale:id:title:)``): an SVG's text scales
    // with it, so one drawing is either tiny on a phone or huge across a desktop card.
    static let width = 480.0
    /// The drawings' widths and the class that shows each at its screen widths (console.css).
    static let sizes: [(width: Double, sizeClass: String)] = [
        (360, "chart-small"), (640, "chart-medium"), (1_000, "chart-large"),
    ]
    static let rowHeight = 52.0
    static let axisHeight = 26.0
    static let margin = 16.0

    /// The chart, or nil when no row has a finite estimate (nothing to draw).
    /// - Parameters:
    ///   - id: Unique in the page: the title and description are referred to by it.
    ///   - title: What the chart shows, for screen readers (its caption is in the page).
    static func svg(
        rows: [Row],
        scale: Scale,
        id: String,
        title: String,
        width: Double = width,
        sizeClass: String? = nil
    ) -> String? {
        let drawable = rows.filter { $0.estimate.isFinite }
        guard !drawable.isEmpty else { return nil }
        let (low, high) = domain(drawable)
        let plotLeft = margin
        let plotRight = width - margin
        func x(_ value: Double) -> Double {
            let clamped = min(max(value, low), high)
            return plotLeft + (clamped - low) / (high - low) * (plotRight - plotLeft)
        }
        let height = axisHeight + Double(drawable.count) * rowHeight + 8
        let escapedId = MarkupEscaping.escaped(id)
        var svg = """
            <svg class="chart\(sizeClass.map { " " + $0 } ?? "")" role="img" aria-labelledby="\(escapedId)-title \(escapedId)-desc" \
            viewBox="0 0 \(format(width)) \(format(height))" preserveAspectRatio="xMinYMin meet">
            <title id="\(escapedId)-title">\(MarkupEscaping.escaped(title))</title>
            <desc id="\(escapedId)-desc">\(MarkupEscaping.escaped(description(drawable, scale: scale)))</desc>

            """
        // The axis: zero, and the domain's ends where they do not crowd it.
        for tick in [low, 0, high] where tick == 0 || abs(x(tick) - x(0)) > 90 {
            let anchor = tick == low ? "start" : tick == high ? "end" : "middle"
            svg += """
                <text class="chart-tick" x="\(format(x(tick)))" y="16" text-anchor="\(anchor)">\(scale.format(tick))</text>

                """
        }
        svg += """
            <line class="chart-zero" x1="\(format(x(0)))" y1="\(format(axisHeight - 6))" \
            x2="\(format(x(0)))" y2="\(format(height - 4))"/>

            """
        for (index, row) in drawable.enumerated() {
            let y = axisHeight + Double(index) * rowHeight + rowHeight / 2 + 8
            let kind = row.lower > 0 ? "chart-up" : row.upper < 0 ? "chart-down" : "chart-flat"
            svg += """
                <g class="\(kind)">
                <text class="chart-label" x="\(format(plotLeft))" y="\(format(y - 12))">\(MarkupEscaping.escaped(row.label)): \(scale.format(row.estimate))</text>
                <line class="chart-interval" x1="\(format(x(row.lower)))" y1="\(format(y))" x2="\(format(x(row.upper)))" y2="\(format(y))"/>

                """
            // An unbounded end runs off the plot: an arrow says so.
            if !row.lower.isFinite || row.lower < low {
                svg += arrow(at: plotLeft, y: y, pointing: -1)
            }
            if !row.upper.isFinite || row.upper > high {
                svg += arrow(at: plotRight, y: y, pointing: 1)
            }
            svg += """
                <circle class="chart-point" cx="\(format(x(row.estimate)))" cy="\(format(y))" r="6"/>
                </g>

                """
        }
        return svg + "</svg>"
    }

    /// The chart at each of ``sizes``, the wider ones with ids of their own; the stylesheet shows
    /// the one that fits the screen (the others are `display: none`, hidden from screen readers too).
    static func responsive(rows: [Row], scale: Scale, id: String, title: String) -> String? {
        let drawings = sizes.enumerated().compactMap { index, size in
            svg(
                rows: rows,
                scale: scale,
                id: index == 0 ? id : "\(id)-\(index)",
                title: title,
                width: size.width,
                sizeClass: size.sizeClass
            )
        }
        return drawings.isEmpty ? nil : drawings.joined(separator: "\n")
    }

    /// The values shown: every finite bound and estimate and zero, widened by a tenth; an
    /// unbounded interval is shown to the edge.
    static func domain(_ rows: [Row]) -> (Double, Double) {
        var values: [Double] = [0]
        for row in rows {
            values.append(row.estimate)
            if row.lower.isFinite { values.append(row.lower) }
            if row.upper.isFinite { values.append(row.upper) }
        }
        var low = values.min() ?? 0
        var high = values.max() ?? 0
        if high - low < 1e-9 {
            low -= 0.01
            high += 0.01
        }
        let pad = (high - low) * 0.1
        return (low - pad, high + pad)
    }

    /// One sentence per row, for screen readers.
    static func description(_ rows: [Row], scale: Scale) -> String {
        rows.map { row in
            "\(row.label): \(scale.format(row.estimate)) against control, 95 % interval "
                + "\(bound(row.lower, scale)) to \(bound(row.upper, scale))"
        }
        .joined(separator: "; ")
    }

    /// `+12.3 %`, `−4.0 %`, `0 %`.
    static func percent(_ fraction: Double) -> String {
        guard fraction.isFinite else { return fraction > 0 ? "+∞" : "−∞" }
        let magnitude = share(fraction)
        return magnitude == "0 %" ? magnitude : (fraction > 0 ? "+" : "−") + magnitude
    }

    /// `12.3 %` without a sign (a share of the split, a chance), `0 %`.
    static func share(_ fraction: Double) -> String {
        let value = (abs(fraction) * 1_000).rounded() / 10
        return value == 0 ? "0 %" : String(format: "%.1f", value) + " %"
    }

    /// An interval's end in the scale's units, or which way it is unbounded.
    static func bound(_ value: Double, _ scale: Scale) -> String {
        value.isFinite ? scale.format(value) : (value > 0 ? "unbounded above" : "unbounded below")
    }

    /// The arrowhead of an interval that runs off the chart.
    static func arrow(at x: Double, y: Double, pointing direction: Double) -> String {
        let tip = x + 8 * direction
        return """
            <path class="chart-arrow" d="M \(format(x)) \(format(y - 5)) L \(format(tip)) \(format(y)) L \(format(x)) \(format(y + 5)) Z"/>

            """
    }

    /// A coordinate, one decimal.
    static func format(_ value: Double) -> String {
        String(format: "%.1f", value)
    }
}
