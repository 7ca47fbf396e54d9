import Testing

@testable import VaneAuthoring
@testable import VaneCore

/// Three-way merges of templates: a draft's changes since it was started, applied to what is live.
@Suite struct TemplateMergeTests {
    typealias Field = TemplateMerge.FieldConflict

    func parameter(
        _ key: String,
        _ value: String,
        _ conditional: [(String, String)] = [],
        description: String? = nil
    ) -> TemplateParameter {
        TemplateParameter(
            key: key,
            defaultValue: .value(value),
            conditionalValues: conditional.map { ConditionalValue(conditionName: $0.0, value: .value($0.1)) },
            description: description
        )
    }

    func condition(_ name: String, _ expression: String = "percent <= 10") -> TemplateCondition {
        TemplateCondition(name: name, expression: expression)
    }

    func conditions(_ names: String...) -> [TemplateCondition] {
        names.map { condition($0) }
    }

    func json(_ parameter: TemplateParameter) -> String {
        JSONValue.object(parameter.json()).serialized(.compact)
    }

    @Test func disjointChangesMerge() throws {
        let base = ConfigTemplate(
            conditions: [condition("ios", "device.os == 'ios'"), condition("android", "device.os == 'android'")],
            parameters: [parameter("a", "1", [("ios", "i")]), parameter("b", "1"), parameter("c", "1")],
            version: TemplateVersion(versionNumber: "1")
        )
        var theirs = base
        theirs.parameters = [parameter("a", "2", [("ios", "i")]), parameter("b", "1"), parameter("d", "1")]
        theirs.version = TemplateVersion(versionNumber: "2")
        theirs.settings.clientsMayPinDateTime = true
        var ours = base
        ours.conditions = [
            condition("ios", "device.os == 'ios'"), condition("beta", "percent <= 5"),
            condition("android", "device.os == 'android' && percent <= 50"),
        ]
        ours.parameters = [
            parameter("a", "1", [("ios", "i")]), parameter("b", "2", [("beta", "on")]), parameter("c", "1"),
            parameter("e", "1"),
        ]
        ours.settings.clientsReceiveDescriptions = true
        ours.version = nil

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        let expected = ConfigTemplate(
            conditions: [
                condition("ios", "device.os == 'ios'"), condition("beta", "percent <= 5"),
                condition("android", "device.os == 'android' && percent <= 50"),
            ],
            parameters: [
                parameter("a", "2", [("ios", "i")]), parameter("b", "2", [("beta", "on")]), parameter("d", "1"),
                parameter("e", "1"),
            ],
            version: TemplateVersion(versionNumber: "2"),
            settings: TemplateSettings(clientsMayPinDateTime: true, clientsReceiveDescriptions: true)
        )
        #expect(merge.merged == expected)
    }

    @Test func theSameParameterChangedDifferentlyConflictsOnlyOnTheFieldsBothChanged() throws {
        let base = ConfigTemplate(
            conditions: conditions("ios", "beta"),
            parameters: [
                parameter("a", "1", [("ios", "x"), ("beta", "b")], description: "old"),
                parameter("untouched", "1"),
            ]
        )
        var theirs = base
        theirs.parameters[0] = parameter("a", "2", [("ios", "y"), ("beta", "b")], description: "old")
        var ours = base
        ours.parameters[0] = parameter("a", "3", [("ios", "y")], description: "new")
        ours.parameters[0].conditionalValues.append(ConditionalValue(conditionName: "beta", value: .useInAppDefault))

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.merged == nil)
        #expect(
            merge.conflicts == [
                TemplateMerge.Conflict(
                    subject: .parameter("a"),
                    fields: [Field(field: "defaultValue", base: "\"1\"", theirs: "\"2\"", ours: "\"3\"")]
                )
            ]
        )
    }

    @Test func differentFieldsOfOneParameterMergeOnTheirOwn() throws {
        let base = ConfigTemplate(
            conditions: conditions("ios", "beta"),
            parameters: [parameter("a", "1", [("ios", "x")], description: "old")]
        )
        var theirs = base
        theirs.parameters[0].defaultValue = .value("live")
        theirs.parameters[0].conditionalValues.append(ConditionalValue(conditionName: "beta", value: .value("b")))
        var ours = base
        ours.parameters[0].description = "new"
        ours.parameters[0].conditionalValues[0].value = .value("y")
        ours.parameters[0].valueType = .string

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        var expected = parameter("a", "live", [("ios", "y"), ("beta", "b")], description: "new")
        expected.valueType = .string
        #expect(merge.merged?.parameters == [expected])
    }

    @Test func differentFieldsOfOneConditionMergeOnTheirOwn() throws {
        let base = ConfigTemplate(conditions: [condition("c", "percent <= 10")])
        var theirs = base
        theirs.conditions[0].tagColor = "GREEN"
        var ours = base
        ours.conditions[0].source = .expression("percent <= 20")

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        #expect(
            merge.merged?.conditions == [TemplateCondition(name: "c", expression: "percent <= 20", tagColor: "GREEN")]
        )

        ours.conditions[0].tagColor = "BLUE"
        let both = TemplateMerge(base: base, theirs: theirs, ours: ours)
        #expect(
            both.conflicts == [
                TemplateMerge.Conflict(
                    subject: .condition("c"),
                    fields: [Field(field: "tagColor", base: nil, theirs: "GREEN", ours: "BLUE")]
                )
            ]
        )
    }

    @Test func resolutionsSettleConflictsFieldByField() throws {
        let base = ConfigTemplate(
            conditions: conditions("ios"),
            parameters: [parameter("a", "1", [("ios", "x")], description: "old")]
        )
        var theirs = base
        theirs.parameters[0] = parameter("a", "live", [("ios", "live ios")], description: "live")
        var ours = base
        ours.parameters[0] = parameter("a", "mine", [("ios", "my ios")], description: "mine")
        let subject = TemplateMerge.Conflict.Subject.parameter("a")
        func key(_ field: String) -> TemplateMerge.FieldKey { TemplateMerge.FieldKey(subject: subject, field: field) }

        let merge = TemplateMerge(
            base: base,
            theirs: theirs,
            ours: ours,
            resolving: [
                key("defaultValue"): .ours,
                key("conditionalValues[ios]"): .theirs,
                key("description"): .value("both"),
                key("group"): .ours,
            ]
        )

        #expect(merge.conflicts == [])
        #expect(merge.merged?.parameters == [parameter("a", "mine", [("ios", "live ios")], description: "both")])
        #expect(
            merge.settled.map { "\($0.conflict.field)=\($0.result ?? "none") overrides:\($0.overridesTheirs)" } == [
                "defaultValue=\"mine\" overrides:true",
                "conditionalValues[ios]=\"live ios\" overrides:false",
                "description=both overrides:true",
            ]
        )
        #expect(merge.unusedResolutions == [key("group")])

        // A value the field cannot take is refused, and the field stays a conflict.
        let refused = TemplateMerge(
            base: base,
            theirs: theirs,
            ours: ours,
            resolving: [key("defaultValue"): .value(.number(JSONNumber(3))), key("description"): .ours]
        )
        #expect(refused.merged == nil)
        #expect(refused.conflicts.map { $0.fields.map(\.field) } == [["defaultValue", "conditionalValues[ios]"]])
        #expect(refused.refusedResolutions.map(\.key) == [key("defaultValue")])
        #expect(refused.refusedResolutions.first?.reason.contains("found a number") == true)
    }

    @Test func removalsPositionsAndOrderSettleBySide() throws {
        let base = ConfigTemplate(conditions: conditions("a", "b", "c"), parameters: [parameter("p", "1")])
        var theirs = base
        theirs.conditions = conditions("new", "b", "a", "c")
        theirs.parameters = []
        var ours = base
        ours.conditions = conditions("a", "new", "c", "b")
        ours.parameters = [parameter("p", "2")]

        let conflicted = TemplateMerge(base: base, theirs: theirs, ours: ours)
        #expect(
            conflicted.conflicts.map { "\($0.subject)" } == [
                "condition(\"new\")", "conditionOrder", "parameter(\"p\")",
            ]
        )

        let mine = TemplateMerge(
            base: base,
            theirs: theirs,
            ours: ours,
            resolving: [
                TemplateMerge.FieldKey(subject: .condition("new"), field: "position"): .ours,
                TemplateMerge.FieldKey(subject: .conditionOrder, field: "order"): .ours,
                TemplateMerge.FieldKey(subject: .parameter("p"), field: "removed"): .ours,
            ]
        )
        #expect(mine.conflicts == [])
        #expect(mine.merged?.conditions.map(\.name) == ["a", "new", "c", "b"])
        #expect(mine.merged?.parameters == [parameter("p", "2")])

        let live = TemplateMerge(
            base: base,
            theirs: theirs,
            ours: ours,
            resolving: [
                TemplateMerge.FieldKey(subject: .condition("new"), field: "position"): .theirs,
                TemplateMerge.FieldKey(subject: .conditionOrder, field: "order"): .theirs,
                TemplateMerge.FieldKey(subject: .parameter("p"), field: "removed"): .theirs,
            ]
        )
        #expect(live.merged == theirs)

        let valued = TemplateMerge(
            base: base,
            theirs: theirs,
            ours: ours,
            resolving: [TemplateMerge.FieldKey(subject: .parameter("p"), field: "removed"): .value("x")]
        )
        #expect(valued.refusedResolutions.map(\.reason) == ["removed takes mine or theirs, not a value of its own"])
    }

    @Test func typeAndMetadataConflictsAreNamed() throws {
        let base = ConfigTemplate(parameters: [parameter("a", "1")])
        var theirs = base
        theirs.parameters[0].valueType = .number
        var ours = base
        ours.parameters[0].valueType = .string
        ours.parameters[0].metadata = ParameterMetadata(title: "A")

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(
            merge.conflicts.first?.fields == [Field(field: "valueType", base: nil, theirs: "NUMBER", ours: "STRING")]
        )
        // Metadata only the draft set merges.
        ours.parameters[0].valueType = .number
        #expect(TemplateMerge(base: base, theirs: theirs, ours: ours).merged?.parameters[0].metadata?.title == "A")
    }

    @Test func theIdenticalChangeOnBothSidesIsNoConflict() throws {
        let base = ConfigTemplate(
            conditions: conditions("a", "b"),
            parameters: [parameter("x", "1"), parameter("y", "1"), parameter("z", "1")]
        )
        var changed = base
        changed.conditions = [condition("a", "percent <= 50"), condition("new"), condition("b")]
        changed.parameters = [parameter("x", "2"), parameter("z", "1"), parameter("w", "1")]
        var theirs = changed
        theirs.version = TemplateVersion(versionNumber: "7")

        let merge = TemplateMerge(base: base, theirs: theirs, ours: changed)

        #expect(merge.conflicts == [])
        #expect(merge.merged == theirs)
    }

    @Test func definitionsThatDifferOnlyInTheOrderOfConditionalValuesDoNotConflict() throws {
        let base = ConfigTemplate(conditions: conditions("a", "b"), parameters: [parameter("x", "1")])
        var theirs = base
        theirs.parameters[0] = parameter("x", "2", [("a", "1"), ("b", "2")])
        var ours = base
        ours.parameters[0] = parameter("x", "2", [("b", "2"), ("a", "1")])

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        #expect(merge.merged == theirs)
    }

    @Test func removedOnOneSideAndChangedOnTheOtherConflicts() throws {
        let base = ConfigTemplate(conditions: conditions("c"), parameters: [parameter("a", "1"), parameter("b", "1")])
        var removed = base
        removed.parameters = [parameter("b", "1")]
        removed.conditions = []
        var changed = base
        changed.parameters[0] = parameter("a", "2")
        changed.conditions = [condition("c", "percent <= 99")]

        let oursRemoved = TemplateMerge(base: base, theirs: changed, ours: removed)
        let theirsRemoved = TemplateMerge(base: base, theirs: removed, ours: changed)

        #expect(oursRemoved.merged == nil)
        let conditionJSON = { (expression: String) in "{\"name\":\"c\",\"expression\":\"\(expression)\"}" }
        #expect(
            oursRemoved.conflicts == [
                TemplateMerge.Conflict(
                    subject: .condition("c"),
                    fields: [
                        Field(
                            field: "removed",
                            base: conditionJSON("percent <= 10"),
                            theirs: conditionJSON("percent <= 99"),
                            ours: nil
                        )
                    ]
                ),
                TemplateMerge.Conflict(
                    subject: .parameter("a"),
                    fields: [
                        Field(
                            field: "removed",
                            base: json(parameter("a", "1")),
                            theirs: json(parameter("a", "2")),
                            ours: nil
                        )
                    ]
                ),
            ]
        )
        #expect(theirsRemoved.merged == nil)
        #expect(
            theirsRemoved.conflicts.map(\.fields) == [
                [
                    Field(
                        field: "removed",
                        base: conditionJSON("percent <= 10"),
                        theirs: nil,
                        ours: conditionJSON("percent <= 99")
                    )
                ],
                [
                    Field(
                        field: "removed",
                        base: json(parameter("a", "1")),
                        theirs: nil,
                        ours: json(parameter("a", "2"))
                    )
                ],
            ]
        )
        // Removed on both sides, or removed on one and untouched on the other: no conflict.
        #expect(TemplateMerge(base: base, theirs: removed, ours: removed).merged == removed)
        #expect(TemplateMerge(base: base, theirs: base, ours: removed).merged == removed)
    }

    @Test func theSameKeyAddedOnBothSidesWithDifferentDefinitionsConflicts() throws {
        let base = ConfigTemplate(parameters: [parameter("a", "1")])
        var theirs = base
        theirs.parameters.append(parameter("new", "live", description: "same"))
        var ours = base
        ours.parameters.append(parameter("new", "draft", description: "same"))

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.merged == nil)
        #expect(
            merge.conflicts == [
                TemplateMerge.Conflict(
                    subject: .parameter("new"),
                    fields: [Field(field: "defaultValue", base: nil, theirs: "\"live\"", ours: "\"draft\"")]
                )
            ]
        )
        #expect(TemplateMerge(base: base, theirs: theirs, ours: theirs).merged == theirs)
    }

    @Test func aConditionAddedByOursKeepsItsPlaceAmongItsNeighbours() throws {
        let base = ConfigTemplate(conditions: conditions("a", "b", "c"))
        var theirs = base
        theirs.conditions = conditions("a", "t", "b", "c")
        var ours = base
        ours.conditions = conditions("first", "a", "x", "b", "c", "last")

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        #expect(merge.merged?.conditions.map(\.name) == ["first", "a", "t", "x", "b", "c", "last"])
    }

    @Test func aConditionAfterOneTheOtherSideRemovedFollowsItsNearestRemainingNeighbour() throws {
        let base = ConfigTemplate(conditions: conditions("a", "b", "c"))
        var theirs = base
        theirs.conditions = conditions("a", "c")
        var ours = base
        ours.conditions = conditions("a", "b", "x", "c")

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.merged?.conditions.map(\.name) == ["a", "x", "c"])
    }

    @Test func theSameConditionAddedAtDifferentPlacesConflictsOnItsPosition() throws {
        let base = ConfigTemplate(conditions: conditions("a", "b"))
        var theirs = base
        theirs.conditions = conditions("new", "a", "b")
        var ours = base
        ours.conditions = conditions("a", "new", "b")

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.merged == nil)
        #expect(
            merge.conflicts == [
                TemplateMerge.Conflict(
                    subject: .condition("new"),
                    fields: [Field(field: "position", base: nil, theirs: "first", ours: "after a")]
                )
            ]
        )
    }

    @Test func conditionOrder() throws {
        let base = ConfigTemplate(conditions: conditions("a", "b", "c"))
        var theirs = base
        theirs.conditions = conditions("b", "a", "c")
        var ours = base
        ours.conditions = conditions("a", "c", "b")

        let both = TemplateMerge(base: base, theirs: theirs, ours: ours)
        #expect(both.merged == nil)
        #expect(
            both.conflicts == [
                TemplateMerge.Conflict(
                    subject: .conditionOrder,
                    fields: [Field(field: "order", base: "a, b, c", theirs: "b, a, c", ours: "a, c, b")]
                )
            ]
        )

        // The same reorder on both sides merges.
        #expect(TemplateMerge(base: base, theirs: ours, ours: ours).merged?.conditions.map(\.name) == ["a", "c", "b"])

        // Only ours reordered: its order, in the places the conditions have in theirs.
        var added = base
        added.conditions = conditions("a", "t", "b", "c")
        var reordered = base
        reordered.conditions = conditions("c", "a", "b")
        let onlyOurs = TemplateMerge(base: base, theirs: added, ours: reordered)
        #expect(onlyOurs.conflicts == [])
        #expect(onlyOurs.merged?.conditions.map(\.name) == ["c", "t", "a", "b"])

        // Only theirs reordered: theirs' order.
        let onlyTheirs = TemplateMerge(base: base, theirs: reordered, ours: added)
        #expect(onlyTheirs.merged?.conditions.map(\.name) == ["c", "a", "t", "b"])
    }

    @Test func parametersInGroups() throws {
        let base = ConfigTemplate(
            parameters: [parameter("u", "1")],
            parameterGroups: [
                ParameterGroup(name: "G", parameters: [parameter("g1", "1"), parameter("g2", "1")]),
                ParameterGroup(name: "H", description: "h", parameters: [parameter("h1", "1")]),
            ]
        )
        var theirs = base
        theirs.parameterGroups[0].parameters = [parameter("g1", "2"), parameter("g2", "1"), parameter("g3", "1")]
        theirs.parameterGroups[1].description = "live"
        var ours = base
        ours.parameters = []
        ours.parameterGroups = [
            ParameterGroup(name: "G", parameters: [parameter("g1", "1"), parameter("g4", "1")]),
            ParameterGroup(name: "H", description: "h", parameters: [parameter("h1", "1"), parameter("g2", "1")]),
            ParameterGroup(name: "N", parameters: [parameter("u", "1")]),
        ]

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        let expected = ConfigTemplate(
            parameterGroups: [
                ParameterGroup(
                    name: "G",
                    parameters: [parameter("g1", "2"), parameter("g3", "1"), parameter("g4", "1")]
                ),
                ParameterGroup(
                    name: "H",
                    description: "live",
                    parameters: [parameter("h1", "1"), parameter("g2", "1")]
                ),
                ParameterGroup(name: "N", parameters: [parameter("u", "1")]),
            ]
        )
        #expect(merge.merged == expected)
    }

    @Test func movingOneParameterToDifferentGroupsConflictsOnItsGroup() throws {
        let base = ConfigTemplate(
            parameters: [parameter("p", "1")],
            parameterGroups: [ParameterGroup(name: "A"), ParameterGroup(name: "B")]
        )
        var theirs = base
        theirs.parameters = []
        theirs.parameterGroups[0].parameters = [parameter("p", "1")]
        var ours = base
        ours.parameters = []
        ours.parameterGroups[1].parameters = [parameter("p", "1")]

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.merged == nil)
        #expect(
            merge.conflicts == [
                TemplateMerge.Conflict(
                    subject: .parameter("p"),
                    fields: [Field(field: "group", base: nil, theirs: "A", ours: "B")]
                )
            ]
        )
    }

    @Test func aGroupTheDraftRemovedStaysWhileLiveParametersSitInIt() throws {
        let base = ConfigTemplate(
            parameterGroups: [ParameterGroup(name: "G", description: "g", parameters: [parameter("a", "1")])]
        )
        var theirs = base
        theirs.parameterGroups[0].parameters.append(parameter("b", "1"))
        let ours = ConfigTemplate()

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        #expect(
            merge.merged
                == ConfigTemplate(
                    parameterGroups: [ParameterGroup(name: "G", description: "g", parameters: [parameter("b", "1")])]
                )
        )
        #expect(TemplateMerge(base: base, theirs: base, ours: ours).merged == ours)
    }

    @Test func aMergedParameterMayNameAConditionTheOtherSideRemoved() throws {
        let base = ConfigTemplate(conditions: conditions("beta"), parameters: [parameter("a", "1", [("beta", "b")])])
        var theirs = base
        theirs.conditions = []
        theirs.parameters = [parameter("a", "1")]
        var ours = base
        ours.parameters.append(parameter("new", "1", [("beta", "on")]))

        let merge = TemplateMerge(base: base, theirs: theirs, ours: ours)

        #expect(merge.conflicts == [])
        let merged = try #require(merge.merged)
        #expect(merged == ConfigTemplate(parameters: [parameter("a", "1"), parameter("new", "1", [("beta", "on")])]))
        let errors = merged.validate().filter { $0.severity == .error }
        #expect(errors.map(\.path.description) == ["parameters.new.conditionalValues.beta"])
        #expect(errors.map(\.rule) == ["unknown-condition"])
    }

    @Test func settingsAndUnknownFields() throws {
        var base = ConfigTemplate(version: TemplateVersion(versionNumber: "1"))
        base.unknownFields = ["etag": "x", "kept": 1]
        base.settings.unknownFields = ["future": 1]
        base.parameterGroups = [ParameterGroup(name: "G", description: "g", parameters: [parameter("a", "1")])]
        var theirs = base
        theirs.version = TemplateVersion(versionNumber: "2")
        theirs.settings.clientsMayPinDateTime = true
        theirs.unknownFields["etag"] = "live"
        theirs.settings.unknownFields["future"] = 2
        theirs.parameterGroups[0].description = "live"
        var ours = base
        ours.version = TemplateVersion(versionNumber: "1", description: "draft")
        ours.settings.clientsReceiveDescriptions = true
        ours.unknownFields["added"] = true

        let disjoint = TemplateMerge(base: base, theirs: theirs, ours: ours)
        #expect(disjoint.conflicts == [])
        var expected = theirs
        expected.settings.clientsReceiveDescriptions = true
        expected.unknownFields["added"] = true
        #expect(disjoint.merged == expected)

        ours.unknownFields["etag"] = "draft"
        ours.settings.unknownFields["future"] = 3
        ours.parameterGroups[0].description = "draft"
        let conflicting = TemplateMerge(base: base, theirs: theirs, ours: ours)
        #expect(conflicting.merged == nil)
        #expect(
            conflicting.conflicts == [
                TemplateMerge.Conflict(
                    subject: .settings,
                    fields: [
                        Field(field: "parameterGroups.G.description", base: "g", theirs: "live", ours: "draft"),
                        Field(field: "vane.future", base: "1", theirs: "2", ours: "3"),
                        Field(field: "etag", base: "\"x\"", theirs: "\"live\"", ours: "\"draft\""),
                    ]
                )
            ]
        )
    }

    @Test func mergingWithAnUnchangedSideGivesTheOtherSideExactly() throws {
        var generator = TemplateGenerator(seed: 0x5EED)
        var checked = 0
        for _ in 0..<300 {
            let base = generator.template()
            let changed = generator.mutated(base)
            let draftOnly = TemplateMerge(base: base, theirs: base, ours: changed)
            #expect(draftOnly.conflicts == [])
            #expect(draftOnly.merged == changed, "\(base.serialized())\n\(changed.serialized())")
            var live = changed
            live.version = TemplateVersion(versionNumber: "99")
            let liveOnly = TemplateMerge(base: base, theirs: live, ours: base)
            #expect(liveOnly.conflicts == [])
            #expect(liveOnly.merged == live, "\(base.serialized())\n\(live.serialized())")
            #expect(TemplateMerge(base: base, theirs: live, ours: changed).merged == live)
            if changed != base { checked += 1 }
        }
        #expect(checked > 250, "the generator must change most templates")
    }

    @Test func identicalChangesOnBothSidesNeverConflict() throws {
        var generator = TemplateGenerator(seed: 0xC0FFEE)
        for _ in 0..<300 {
            let base = generator.template()
            let changed = generator.mutated(base)
            var live = changed
            live.version = TemplateVersion(versionNumber: "5")
            let merge = TemplateMerge(base: base, theirs: live, ours: changed)
            #expect(merge.conflicts == [], "\(base.serialized())\n\(changed.serialized())")
            #expect(merge.merged == live)
        }
    }

    @Test func changesToDifferentFieldsOfOneParameterAlwaysMerge() throws {
        var generator = TemplateGenerator(seed: 0xF1E1D)
        var checked = 0
        for _ in 0..<300 {
            let base = generator.template()
            guard let key = base.allParameters.first?.key else { continue }
            func changing(_ edit: (inout TemplateParameter) -> Void) -> ConfigTemplate {
                var template = base
                for index in template.parameters.indices where template.parameters[index].key == key {
                    edit(&template.parameters[index])
                }
                for group in template.parameterGroups.indices {
                    for index in template.parameterGroups[group].parameters.indices
                    where template.parameterGroups[group].parameters[index].key == key {
                        edit(&template.parameterGroups[group].parameters[index])
                    }
                }
                return template
            }
            let live = changing { $0.defaultValue = .value("live \(key)") }
            let draft = changing {
                $0.description = "draft \(key)"
                $0.conditionalValues.removeAll()
            }
            let merge = TemplateMerge(base: base, theirs: live, ours: draft)
            #expect(merge.conflicts == [])
            let merged = try #require(merge.merged?.parameter(forKey: key))
            #expect(merged.defaultValue == .value("live \(key)"))
            #expect(merged.description == "draft \(key)")
            #expect(merged.conditionalValues.isEmpty)
            checked += 1
        }
        #expect(checked > 150, "most generated templates must have a parameter")
    }
}

/// Templates and edits from a fixed seed (SplitMix64), so every run checks the same cases.
struct TemplateGenerator {
    var state: UInt64
    var counter = 0

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    mutating func chance(_ percent: Int) -> Bool { int(100) < percent }

    mutating func name(_ prefix: String) -> String {
        counter += 1
        return "\(prefix)\(counter)"
    }

    mutating func shuffled<Element>(_ elements: [Element]) -> [Element] {
        var result = elements
        for index in result.indices.reversed() where index > 0 { result.swapAt(index, int(index + 1)) }
        return result
    }

    mutating func parameter(conditions: [TemplateCondition]) -> TemplateParameter {
        var parameter = TemplateParameter(key: name("p"), defaultValue: .value(String(int(4))))
        for condition in conditions where chance(30) {
            parameter.conditionalValues.append(
                ConditionalValue(conditionName: condition.name, value: chance(80) ? .value("c") : .useInAppDefault)
            )
        }
        if chance(20) { parameter.description = "about \(parameter.key)" }
        if chance(10) { parameter.metadata = ParameterMetadata(title: "T", realtime: true) }
        return parameter
    }

    mutating func template() -> ConfigTemplate {
        var template = ConfigTemplate()
        for _ in 0..<int(5) {
            template.conditions.append(TemplateCondition(name: name("c"), expression: "percent <= \(int(100))"))
        }
        for _ in 0..<int(4) { template.parameters.append(parameter(conditions: template.conditions)) }
        for _ in 0..<int(3) {
            var group = ParameterGroup(name: name("g"), description: chance(50) ? "group" : nil)
            for _ in 0..<int(4) { group.parameters.append(parameter(conditions: template.conditions)) }
            template.parameterGroups.append(group)
        }
        template.settings.clientsMayPinDateTime = chance(30)
        if chance(20) { template.unknownFields["extra"] = .number(JSONNumber(int(3))) }
        return template
    }

    /// A random container of `template`: -1 for the ungrouped parameters, else a group's index.
    mutating func container(_ template: ConfigTemplate) -> Int { int(template.parameterGroups.count + 1) - 1 }

    mutating func removeParameter(from template: inout ConfigTemplate) -> TemplateParameter? {
        let keys = template.allParameters.map(\.key)
        guard !keys.isEmpty else { return nil }
        let key = keys[int(keys.count)]
        let removed = template.parameter(forKey: key)
        template.parameters.removeAll { $0.key == key }
        for index in template.parameterGroups.indices {
            template.parameterGroups[index].parameters.removeAll { $0.key == key }
        }
        return removed
    }

    mutating func insert(_ parameter: TemplateParameter, into template: inout ConfigTemplate) {
        let target = container(template)
        if target < 0 {
            template.parameters.insert(parameter, at: int(template.parameters.count + 1))
        } else {
            template.parameterGroups[target].parameters.insert(
                parameter,
                at: int(template.parameterGroups[target].parameters.count + 1)
            )
        }
    }

    mutating func mutated(_ original: ConfigTemplate) -> ConfigTemplate {
        var template = original
        for _ in 0..<(1 + int(4)) {
            switch int(13) {
            case 0:
                if var parameter = removeParameter(from: &template) {
                    parameter.defaultValue = .value(name("v"))
                    insert(parameter, into: &template)
                }
            case 1:
                _ = removeParameter(from: &template)
            case 2:
                insert(parameter(conditions: template.conditions), into: &template)
            case 3:
                // Moves a parameter, unchanged, to another place or group.
                if let parameter = removeParameter(from: &template) { insert(parameter, into: &template) }
            case 4:
                template.conditions = shuffled(template.conditions)
            case 5:
                let condition = TemplateCondition(name: name("c"), expression: "percent <= \(int(100))")
                template.conditions.insert(condition, at: int(template.conditions.count + 1))
            case 6:
                if !template.conditions.isEmpty { template.conditions.remove(at: int(template.conditions.count)) }
            case 7:
                if !template.conditions.isEmpty {
                    template.conditions[int(template.conditions.count)].tagColor = "GREEN"
                }
            case 8:
                template.parameters = shuffled(template.parameters)
                if !template.parameterGroups.isEmpty {
                    let index = int(template.parameterGroups.count)
                    template.parameterGroups[index].parameters = shuffled(template.parameterGroups[index].parameters)
                }
            case 9:
                template.settings.clientsReceiveDescriptions.toggle()
                template.settings.unknownFields[name("s")] = true
            case 10:
                template.parameterGroups.append(ParameterGroup(name: name("g"), description: "new"))
                template.parameterGroups = shuffled(template.parameterGroups)
            case 11:
                if !template.parameterGroups.isEmpty {
                    let index = int(template.parameterGroups.count)
                    if chance(50) {
                        template.parameterGroups.remove(at: index)
                    } else {
                        template.parameterGroups[index].description = name("d")
                    }
                }
            default:
                template.unknownFields[name("u")] = "added"
                if template.unknownFields["extra"] != nil { template.unknownFields["extra"] = nil }
            }
        }
        return template
    }
}
