/// The always-valid reading of one comparison over every look so far (Johari, Pekelis and Walsh,
/// "Always Valid Inference": p_n = min(p_{n−1}, 1/Λ_n)): the smallest p-value of any look, and
/// the intersection of the looks' confidence sets. Both stay valid however many looks were
/// made, and once the p-value falls below α it stays there: a result does not stop being
/// significant because later data diluted it.
///
/// Only informative looks count (``AlwaysValidTest/isInformative``). The p-value is below α
/// exactly when the absolute interval excludes 0, and the relative one while bounded, as for
/// each look — unless a look's interval missed the running one entirely (see ``adding(_:)``).
public struct AlwaysValidSequence: Sendable, Hashable, Codable {
    /// The smallest p-value of any informative look; 1 before the first.
    public var pValue: Double
    /// The intersection of the informative looks' absolute confidence sets; unbounded before the
    /// first.
    public var absoluteInterval: Interval
    /// The intersection of the informative looks' relative confidence sets; `nil` until a look
    /// had one (control's estimate was 0 at every look so far).
    public var relativeInterval: Interval?

    /// Values as kept.
    public init(pValue: Double, absoluteInterval: Interval, relativeInterval: Interval?) {
        self.pValue = pValue
        self.absoluteInterval = absoluteInterval
        self.relativeInterval = relativeInterval
    }

    /// Before any informative look: p = 1, unbounded.
    public static let beforeAnyLook = AlwaysValidSequence(
        pValue: 1,
        absoluteInterval: .unbounded,
        relativeInterval: nil
    )

    /// The reading after one more look. Taking the same look twice changes nothing.
    ///
    /// A look whose interval does not overlap the running one (the data changed more than
    /// sampling explains — units left out for being in two variants, late events moved — or the
    /// 1 − level chance of a miss came true) leaves that interval as it was rather than
    /// reporting an empty one.
    public func adding(_ look: AlwaysValidTest) -> AlwaysValidSequence {
        guard look.isInformative else { return self }
        var next = self
        next.pValue = min(pValue, look.pValue)
        next.absoluteInterval = absoluteInterval.intersection(look.absoluteInterval) ?? absoluteInterval
        if let relative = look.relativeInterval {
            next.relativeInterval = relativeInterval.map { $0.intersection(relative) ?? $0 } ?? relative
        }
        return next
    }
}
