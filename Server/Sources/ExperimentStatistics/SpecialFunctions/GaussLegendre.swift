import Foundation

/// Composite Gauss–Legendre quadrature: deterministic, and exact for polynomials of degree 39 on
/// each panel, so smooth integrands converge to machine precision with few panels.
enum GaussLegendre {
    /// The 20 nodes on [−1, 1] and their weights, found once by Newton's method on P₂₀.
    static let rule: (nodes: [Double], weights: [Double]) = makeRule(order: 20)

    /// ∫ₗₒʷᵉʳ^ᵘᵖᵖᵉʳ f(x) dx over `panels` equal panels.
    static func integrate(
        from lower: Double,
        to upper: Double,
        panels: Int,
        _ integrand: (Double) -> Double
    ) -> Double {
        guard upper > lower, panels > 0 else { return 0 }
        let width = (upper - lower) / Double(panels)
        let half = width / 2
        var total = 0.0
        for panel in 0..<panels {
            let middle = lower + (Double(panel) + 0.5) * width
            var sum = 0.0
            for (node, weight) in zip(rule.nodes, rule.weights) {
                sum += weight * integrand(middle + half * node)
            }
            total += sum * half
        }
        return total
    }

    private static func makeRule(order n: Int) -> (nodes: [Double], weights: [Double]) {
        var nodes = [Double](repeating: 0, count: n)
        var weights = [Double](repeating: 0, count: n)
        for i in 0..<(n + 1) / 2 {
            var x = cos(Double.pi * (Double(i) + 0.75) / (Double(n) + 0.5))
            var derivative = 0.0
            for _ in 0..<100 {
                var p0 = 1.0
                var p1 = 0.0
                for j in 0..<n {
                    let p2 = p1
                    p1 = p0
                    p0 = ((2 * Double(j) + 1) * x * p1 - Double(j) * p2) / Double(j + 1)
                }
                derivative = Double(n) * (x * p0 - p1) / (x * x - 1)
                let previous = x
                x = previous - p0 / derivative
                if abs(x - previous) < 1e-16 { break }
            }
            nodes[i] = -x
            nodes[n - 1 - i] = x
            let weight = 2 / ((1 - x * x) * derivative * derivative)
            weights[i] = weight
            weights[n - 1 - i] = weight
        }
        return (nodes, weights)
    }
}
