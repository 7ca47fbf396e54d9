import Shop
import Testing
import VaneTesting

@Suite struct CheckoutModelTests {
    @Test func theKillSwitchHidesPayments() {
        let config = InMemoryConfig(["payments_enabled": "false"])
        #expect(CheckoutModel(reader: config).showsPayments == false)
        #expect(config.wasRead(forKey: "payments_enabled"))
    }

    @Test func theExperimentsVariantPicksTheCheckout() {
        let config = InMemoryConfig(["checkout_variant": "one_page"])
        #expect(CheckoutModel(reader: config).usesOnePageCheckout)
        config.set("three_page", forKey: "checkout_variant")
        #expect(CheckoutModel(reader: config).usesOnePageCheckout == false, "unknown variants fall back to control")
    }

    @Test func bundledDefaultsApplyWithoutRemoteValues() {
        let config = InMemoryConfig(defaults: [
            "max_cart_items": CheckoutModel.defaults["max_cart_items"]?.stringValue ?? ""
        ])
        let model = CheckoutModel(reader: config)
        #expect(model.canAdd(toCartOf: 19))
        #expect(model.canAdd(toCartOf: 20) == false)
        #expect(CheckoutModel.catalog.map(\.name) == ["payments_enabled", "max_cart_items", "checkout_variant"])
    }
}
