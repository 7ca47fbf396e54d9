import Foundation
import VaneServerCore

/// One rollout guardrail drawn on the server as SVG: treatment − comparison as a dot with its
/// always-valid interval, a line at zero, the margin as a second line and the side beyond it, where
/// the guard calls the treatment worse, shaded. No script, no chart library; the same figures are
/// in the table beside it, and the SVG's title and description say them for screen readers.
///
/// The colours come from CSS classes: an interval wholly beyond the margin on the bad side is
/// drawn as `chart-down` (worse), any other as `chart-flat`.
enum GuardrailChart {
    /// One guardrail's reading.
    struct Reading: Sendable, Equatable {
        var event: String
        /// treatment − comparison.
        var estimate: Double
        var lower: Double
        var upper: Double
        var margin: Double
        var increaseIsBad: Bool
        var worse: Bool
    }

    // Narrower than ExperimentChart's, the label above its line: on a phone the chart shrinks to
    // about 310 px, and its 16 px text to about 14 px.
    static let width = 360.0
    static let height = 112.0
    static let margin = 16.0

    /// The chart, or nil when the estimate is not finite (nothing to draw).
    /// - Parameters:
    ///   - id: Unique in the page: the title and description are referred to by it.
    ///   - level: The interval's confidence level as text ("97.5 %").
    static func svg(_ reading: Reading, scale: ExperimentChart.Scale, level: String, id: String) -> String? {
        guard reading.estimate.isFinite else { return nil }
        // Drawn as the experiment chart draws: its coordinates and arrowheads.
        let format = ExperimentChart.format
        let badEdge = reading.increaseIsBad ? reading.margin : -reading.margin
        let row = ExperimentChart.Row(
            label: reading.event,
            estimate: reading.estimate,
            lower: reading.lower,
            upper: reading.upper
        )
        var (low, high) = ExperimentChart.domain([row])
        // The margin is always on the axis, with room beyond it for the shaded side.
        let pad = max((high - low) * 0.1, abs(badEdge) * 0.2, 1e-9)
        low = min(low, badEdge - pad)
        high = max(high, badEdge + pad)
        let left = margin
        let right = width - margin
        func x(_ value: Double) -> Double {
            let clamped = min(max(value, low), high)
            return left + (clamped - low) / (high - low) * (right - left)
        }
        let escapedId = MarkupEscaping.escaped(id)
        let title = "\(reading.event): treatment − comparison with its \(level) always-valid interval"
        var svg = """
            <svg class="chart guardrail-chart" role="img" aria-labelledby="\(escapedId)-title \(escapedId)-desc" \
            viewBox="0 0 \(format(width)) \(format(height))" preserveAspectRatio="xMinYMin meet">
            <title id="\(escapedId)-title">\(MarkupEscaping.escaped(title))</title>
            <desc id="\(escapedId)-desc">\(MarkupEscaping.escaped(description(reading, scale: scale, level: level)))</desc>

            """
        // The side where the treatment counts as worse, from the margin to the plot's edge.
        let regionStart = reading.increaseIsBad ? x(badEdge) : left
        let regionEnd = reading.increaseIsBad ? right : x(badEdge)
        svg += """
            <rect class="chart-bad-region" x="\(format(regionStart))" y="22" width="\(format(max(regionEnd - regionStart, 0)))" height="\(format(height - 30))"/>
            <text class="chart-tick" x="\(format(reading.increaseIsBad ? right - 4 : left + 4))" y="\(format(height - 12))" \
            text-anchor="\(reading.increaseIsBad ? "end" : "start")">worse</text>

            """
        // The axis: zero and the margin, and the domain's ends where they do not crowd them.
        var ticks: [(Double, String)] = [(0, "middle")]
        if badEdge != 0, abs(x(badEdge) - x(0)) > 50 { ticks.append((badEdge, "middle")) }
        for (end, anchor) in [(low, "start"), (high, "end")] where ticks.allSatisfy({ abs(x(end) - x($0.0)) > 75 }) {
            ticks.append((end, anchor))
        }
        for (tick, anchor) in ticks {
            svg += """
                <text class="chart-tick" x="\(format(x(tick)))" y="16" text-anchor="\(anchor)">\(scale.format(tick))</text>

                """
        }
        svg += """
            <line class="chart-zero" x1="\(format(x(0)))" y1="22" x2="\(format(x(0)))" y2="\(format(height - 8))"/>

            """
        if badEdge != 0 {
            svg += """
                <line class="chart-margin" x1="\(format(x(badEdge)))" y1="22" x2="\(format(x(badEdge)))" y2="\(format(height - 8))"/>

                """
        }
        let y = 70.0
        svg += """
            <g class="\(reading.worse ? "chart-down" : "chart-flat")">
            <text class="chart-label" x="\(format(left))" y="\(format(y - 16))">\(MarkupEscaping.escaped(reading.event)): \(scale.format(reading.estimate))</text>
            <line class="chart-interval" x1="\(format(x(reading.lower)))" y1="\(format(y))" x2="\(format(x(reading.upper)))" y2="\(format(y))"/>

            """
        // An unbounded end runs off the plot: an arrow says so.
        if !reading.lower.isFinite || reading.lower < low { svg += ExperimentChart.arrow(at: left, y: y, pointing: -1) }
        if !reading.upper.isFinite || reading.upper > high {
            svg += ExperimentChart.arrow(at: right, y: y, pointing: 1)
        }
        svg += """
            <circle class="chart-point" cx="\(format(x(reading.estimate)))" cy="\(format(y))" r="6"/>
            </g>
            </svg>
            """
        return svg
    }

    /// The chart in words, for screen readers: the difference, the interval, the margin and the verdict.
    static func description(_ reading: Reading, scale: ExperimentChart.Scale, level: String) -> String {
        let edge = reading.increaseIsBad ? reading.margin : -reading.margin
        let bound = ExperimentChart.bound
        return "\(reading.event): treatment − comparison \(scale.format(reading.estimate)), \(level) interval "
            + "\(bound(reading.lower, scale)) to \(bound(reading.upper, scale)); "
            + "\(reading.increaseIsBad ? "more" : "less") is worse, and the treatment counts as worse when the whole "
            + "interval is \(reading.increaseIsBad ? "above" : "below") \(scale.format(edge)): "
            + (reading.worse ? "it is significantly worse" : "it is not significantly worse")
    }
}
