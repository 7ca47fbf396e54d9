import Testing
import Vane
import VaneTesting

/// Code under test that reads an experiment's flag and tracks what the user did.
struct OnboardingModel {
    let flags: Flags
    let tracker: any EventTracker

    func finish(seconds: Double) -> String {
        let flow = flags.onboardingFlow
        tracker.track("onboarding_finished", value: seconds, properties: ["flow": flow.rawValue])
        return flow.rawValue
    }
}

/// `InMemoryConfig` records exposures and tracked events as the app's client would (issue #15),
/// so an app's tests can assert on them without a server.
@Suite struct RecordingTests {
    @Test func anExperimentKeysFirstReadIsOneExposureAndTrackedEventsAreKept() {
        let config = InMemoryConfig(["onboarding_flow": "video-tour"], unit: "user-42")
        config.setExperiment("onboarding", variant: "tour", forKey: "onboarding_flow")
        let model = OnboardingModel(flags: Flags(config), tracker: config)

        #expect(model.finish(seconds: 12.5) == "video-tour")
        #expect(model.finish(seconds: 3) == "video-tour")
        #expect(config.exposures.count == 1, "once per variant, not per read")
        let exposure = config.exposures.first
        #expect(exposure?.experiment == "onboarding" && exposure?.variant == "tour" && exposure?.unit == "user-42")
        #expect(exposure?.attributes["feature_flag.key"] == "onboarding_flow")
        #expect(config.trackedEvents.map(\.name) == ["onboarding_finished", "onboarding_finished"])
        #expect(config.trackedEvents.first?.value == 12.5)
        #expect(config.trackedEvents.first?.properties == ["flow": "video-tour"])

        // An overridden key shows the override, not the variant: no exposure.
        config.resetRecording()
        config.setExperiment("onboarding", variant: "tour", forKey: "onboarding_flow")
        config.setOverride("control", forKey: "onboarding_flow")
        _ = Flags(config).onboardingFlow
        #expect(config.exposures.isEmpty)
        #expect(config.trackedEvents.isEmpty, "resetRecording forgets tracked events")
    }
}
