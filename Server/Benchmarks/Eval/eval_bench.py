"""`vane eval` over many contexts beside firebase-admin's server template evaluation (see
../eval-benchmark.sh).

Subcommands (the script runs them in this order):

  generate DIR [--parameters 300] [--contexts 2000] [--seed 14]
      Writes DIR/template.json (a Firebase server template: structured conditions of the kinds
      Firebase's server evaluators know — seeded percent rules and custom signals for country,
      language, platform, app version, plan, seats, email) and DIR/contexts.json (an array of
      contexts in Vane's spelling), the same bytes every run.

  firebase TEMPLATE CONTEXTS
      Firebase's own evaluator: firebase-admin's `remote_config.init_server_template` from the
      template JSON (no network; the app has anonymous credentials and a made-up project id),
      `evaluate` for every context, and the key → value map of every result written to standard
      output as one JSON array. This is the process the benchmark times.

  compare TEMPLATE CONTEXTS FIREBASE_OUTPUT VANE_OUTPUT
      Checks that both outputs give every context the same keys and values; prints the
      differences (at most 10) with the conditions that decided them. Exit 1 on any difference.

  probe VANE_BINARY
      Runs small templates through both evaluators on inputs where Firebase's Python and Node
      Admin SDKs are known to disagree (the reference's custom-signal table), and prints what
      each gives. Vane follows Node. Informative only: exit 0.

  time ROUNDS NAME=COMMAND...
      Runs each command once untimed, then ROUNDS times, alternating between them round by
      round, standard output to NAME.out and standard error to /dev/null; prints each one's
      median wall-clock time and every run.
"""

import json
import logging
import random
import shlex
import statistics
import subprocess
import sys
import time

COUNTRIES = ["us", "gb", "de", "fr", "at", "ch", "jp", "br", "in", "ca", "au", "es", "it", "nl", "se"]
LANGUAGES = ["en", "de", "fr", "ja", "pt-BR", "es", "it", "nl", "sv"]
PLATFORMS = ["ios", "android", "web"]
PLANS = ["free", "pro", "team", "enterprise"]
NAMES = ["checkout", "search", "onboarding", "paywall", "home", "profile", "feed", "settings", "cart", "ads"]


def signal(key, operator, *targets):
    return {"customSignal": {"customSignalOperator": operator, "customSignalKey": key,
                             "targetCustomSignalValues": list(targets)}}


def percent_at_most(seed, percent):
    return {"percent": {"percentOperator": "LESS_OR_EQUAL", "seed": seed, "microPercent": percent * 1_000_000}}


def percent_between(seed, lower, upper):
    return {"percent": {"percentOperator": "BETWEEN", "seed": seed, "microPercentRange": {
        "microPercentLowerBound": lower * 1_000_000, "microPercentUpperBound": upper * 1_000_000}}}


def all_of(*atoms):
    """Firebase's usual shape: an OR of one AND."""
    return {"orCondition": {"conditions": [{"andCondition": {"conditions": list(atoms)}}]}}


def any_of(*branches):
    return {"orCondition": {"conditions": [{"andCondition": {"conditions": list(b)}} for b in branches]}}


def generate(directory, parameter_count, context_count, seed):
    rng = random.Random(seed)

    def version():
        return "%d.%d.%d" % (rng.randint(1, 4), rng.randint(0, 9), rng.randint(0, 5))

    def experiment(index):
        lower = rng.randint(0, 60)
        return percent_between("experiment_%d" % index, lower, lower + rng.randint(5, 40))

    kinds = [
        lambda i: all_of(signal("country", "STRING_EXACTLY_MATCHES", *rng.sample(COUNTRIES, 3))),
        lambda i: all_of(signal("app_version", "SEMANTIC_VERSION_GREATER_EQUAL", version())),
        lambda i: all_of(percent_at_most("rollout_%d" % i, rng.randint(1, 99))),
        lambda i: all_of(signal("platform", "STRING_EXACTLY_MATCHES", "ios"),
                         signal("language", "STRING_EXACTLY_MATCHES", *rng.sample(LANGUAGES, 2))),
        lambda i: all_of(signal("plan", "STRING_EXACTLY_MATCHES", "pro", "team"),
                         signal("seats", "NUMERIC_GREATER_EQUAL", str(rng.randint(2, 80)))),
        lambda i: all_of(experiment(i), signal("country", "STRING_EXACTLY_MATCHES", *rng.sample(COUNTRIES, 4))),
        lambda i: any_of([signal("app_version", "SEMANTIC_VERSION_LESS_THAN", version())],
                         [signal("email", "STRING_CONTAINS", "@example.com"), percent_at_most("staff_%d" % i, 50)]),
        lambda i: all_of(signal("email", "STRING_CONTAINS_REGEX", r"^(qa|beta)[0-9]*@"),
                         signal("seats", "NUMERIC_LESS_THAN", str(rng.randint(10, 200)))),
    ]
    condition_count = 40
    conditions = [{"name": "condition_%d" % i, "condition": kinds[i % len(kinds)](i)} for i in range(condition_count)]

    def value(index, variant):
        # Mostly plain strings; some JSON, numbers, Booleans and text with non-ASCII characters.
        shape = rng.randrange(10)
        if shape == 0:
            return json.dumps({"color": "#%06X" % rng.randrange(1 << 24), "size": rng.randint(8, 32),
                               "title": "Variant \"%s\"" % variant}, separators=(",", ":"))
        if shape == 1:
            return str(rng.randint(0, 10_000))
        if shape == 2:
            return rng.choice(["true", "false"])
        if shape == 3:
            return "Willkommen – schön, dich zu sehen! (%s) ✓" % variant
        return "%s_value_%d_%s" % (rng.choice(NAMES), index, variant)

    parameters = {}
    for index in range(parameter_count):
        key = "%s_%d" % (rng.choice(NAMES), index)
        parameter = {"defaultValue": {"useInAppDefault": True} if rng.randrange(50) == 0
                     else {"value": value(index, "default")}}
        conditional = {}
        for _ in range(rng.choice([0, 1, 1, 2, 2, 3])):
            name = "condition_%d" % rng.randrange(condition_count)
            conditional[name] = {"useInAppDefault": True} if rng.randrange(40) == 0 \
                else {"value": value(index, "variant_%d" % rng.randrange(5))}
        if conditional:
            parameter["conditionalValues"] = conditional
        parameter["valueType"] = "STRING"
        parameters[key] = parameter
    template = {"conditions": conditions, "parameters": parameters,
                "version": {"versionNumber": "14", "updateTime": "2026-11-23T09:00:00.000000Z"}}

    contexts = []
    for index in range(context_count):
        context = {"randomizationId": "%08x-%04x-4%03x-%04x-%012x" % (
            rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
            0x8000 | rng.getrandbits(14), rng.getrandbits(48))}
        # Real fleets leave attributes out now and then: every one is missing for about 1 in 12.
        attributes = {
            "country": rng.choice(COUNTRIES),
            "language": rng.choice(LANGUAGES),
            "platform": rng.choice(PLATFORMS),
            "app_version": "%d.%d.%d" % (rng.randint(1, 4), rng.randint(0, 9), rng.randint(0, 12)),
            "plan": rng.choice(PLANS),
            "seats": rng.randint(1, 250),
            "email": rng.choice(["user%d@example.com" % index, "qa%d@vane.dev" % index,
                                 "beta@customer.org", "someone%d@mail.test" % index]),
        }
        for name, attribute in attributes.items():
            if rng.randrange(12) != 0:
                context[name] = attribute
        contexts.append(context)

    with open("%s/template.json" % directory, "w", encoding="utf-8") as file:
        json.dump(template, file, ensure_ascii=False, indent=2)
    with open("%s/contexts.json" % directory, "w", encoding="utf-8") as file:
        json.dump(contexts, file, ensure_ascii=False, indent=1)


def firebase_app():
    import firebase_admin
    from google.auth.credentials import AnonymousCredentials

    # A made-up project and no credentials: nothing here talks to Google.
    return firebase_admin.initialize_app(AnonymousCredentials(), {"projectId": "vane-eval-benchmark"})


def firebase_results(template_text, contexts):
    from firebase_admin import remote_config

    # remote_config logs every useInAppDefault at INFO and every context without a
    # randomization id at WARNING (through logging.basicConfig(level=INFO), to standard error).
    # Quieted, so the benchmark times evaluation, not logging: this can only favour Firebase.
    logging.getLogger(remote_config.__name__).setLevel(logging.ERROR)
    template = remote_config.init_server_template(app=firebase_app(), template_data_json=template_text)
    results = []
    for context in contexts:
        signals = dict(context)
        # Python's evaluator spells the id randomization_id (Node's and Vane's: randomizationId).
        identifier = signals.pop("randomizationId", None)
        if identifier is not None:
            signals["randomization_id"] = identifier
        config = template.evaluate(signals)
        # ServerConfig has no getAll(); its values are in template order.
        results.append({key: value.as_string() for key, value in config._config_values.items()})
    return results


def firebase(template_path, contexts_path):
    with open(template_path, encoding="utf-8") as file:
        template_text = file.read()
    with open(contexts_path, encoding="utf-8") as file:
        contexts = json.load(file)
    json.dump(firebase_results(template_text, contexts), sys.stdout, ensure_ascii=False, separators=(",", ":"))


def compare(template_path, contexts_path, firebase_path, vane_path):
    with open(template_path, encoding="utf-8") as file:
        template = json.load(file)
    with open(contexts_path, encoding="utf-8") as file:
        contexts = json.load(file)
    with open(firebase_path, encoding="utf-8") as file:
        expected = json.load(file)
    with open(vane_path, encoding="utf-8") as file:
        actual = json.load(file)
    if len(expected) != len(actual) or len(actual) != len(contexts):
        print("different numbers of results: %d contexts, firebase-admin %d, vane %d"
              % (len(contexts), len(expected), len(actual)))
        return 1
    differences = []
    for index, (theirs, ours) in enumerate(zip(expected, actual)):
        if list(theirs.items()) == list(ours.items()):
            continue
        for key in sorted(set(theirs) | set(ours)):
            if theirs.get(key) != ours.get(key):
                differences.append((index, key, theirs.get(key), ours.get(key)))
    keys = sum(len(result) for result in expected)
    if not differences:
        print("same keys, values and key order for all %d contexts (%d values)" % (len(contexts), keys))
        return 0
    print("%d differing values in %d contexts:" % (len(differences), len({d[0] for d in differences})))
    for index, key, theirs, ours in differences[:10]:
        branches = template["parameters"].get(key, {}).get("conditionalValues", {})
        print("  context %d %s, %s: firebase-admin %r, vane %r (conditional on %s)"
              % (index, json.dumps(contexts[index]), key, theirs, ours, ", ".join(branches) or "nothing"))
    return 1


# Inputs on which firebase-admin (Python) and Firebase's Node Admin SDK disagree, from the
# reference's custom-signal table (§8.3); Vane follows Node.
PROBES = [
    ("STRING_EXACTLY_MATCHES", [""], ""),
    ("STRING_EXACTLY_MATCHES", ["5"], 5.0),
    ("STRING_EXACTLY_MATCHES", ["0"], 0),
    ("NUMERIC_EQUAL", ["0"], 0),
    ("NUMERIC_EQUAL", ["0x10"], 16),
    ("NUMERIC_EQUAL", ["1_000"], 1000),
    ("SEMANTIC_VERSION_EQUAL", ["5.12.3"], "5.12.3.0.0.0.0"),
    ("SEMANTIC_VERSION_LESS_THAN", ["2.0"], "1.x"),
    ("STRING_CONTAINS_REGEX", ["^$"], ""),
]


def probe(vane):
    import os
    import tempfile

    rows = []
    with tempfile.TemporaryDirectory() as directory:
        conditions, parameters, contexts = [], {}, {"randomizationId": "probe"}
        for index, (operator, targets, actual) in enumerate(PROBES):
            conditions.append({"name": "p%d" % index, "condition": all_of(signal("s%d" % index, operator, *targets))})
            parameters["k%d" % index] = {"defaultValue": {"value": "false"},
                                         "conditionalValues": {"p%d" % index: {"value": "true"}}}
            contexts["s%d" % index] = actual
        template_text = json.dumps({"conditions": conditions, "parameters": parameters})
        template_path = os.path.join(directory, "template.json")
        with open(template_path, "w", encoding="utf-8") as file:
            file.write(template_text)
        theirs = firebase_results(template_text, [contexts])[0]
        output = subprocess.run([vane, "eval", "--template", template_path, "--context", "-"],
                                input=json.dumps(contexts), capture_output=True, text=True, check=True)
        ours = json.loads(output.stdout)
        for index, (operator, targets, actual) in enumerate(PROBES):
            key = "k%d" % index
            rows.append((operator, targets, actual, theirs[key], ours[key]))
    print("| operator | targets | actual | firebase-admin (Python) | vane (Node's rules) |")
    print("|---|---|---|---|---|")
    for operator, targets, actual, theirs, ours in rows:
        print("| %s | %s | %s | %s | %s |" % (operator, json.dumps(targets), json.dumps(actual), theirs, ours))
    return 0


def time_commands(rounds, commands):
    timings = {name: [] for name, _ in commands}
    for _, command in commands:
        subprocess.run(command, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    for _ in range(rounds):
        for name, command in commands:
            with open("%s.out" % name, "wb") as output:
                start = time.perf_counter()
                subprocess.run(command, shell=True, stdout=output, stderr=subprocess.DEVNULL, check=True)
                timings[name].append(time.perf_counter() - start)
    for name, runs in timings.items():
        print("%s %.4f %s" % (name, statistics.median(runs), " ".join("%.4f" % run for run in runs)))
    return 0


def main(arguments):
    command, rest = arguments[0], arguments[1:]
    if command == "generate":
        options = {"--parameters": 300, "--contexts": 2000, "--seed": 14}
        for flag, text in zip(rest[1::2], rest[2::2]):
            options[flag] = int(text)
        generate(rest[0], options["--parameters"], options["--contexts"], options["--seed"])
        return 0
    if command == "firebase":
        firebase(*rest)
        return 0
    if command == "compare":
        return compare(*rest)
    if command == "probe":
        return probe(*rest)
    if command == "time":
        return time_commands(int(rest[0]), [tuple(item.split("=", 1)) for item in rest[1:]])
    print("unknown command %s; see the module's docstring" % shlex.quote(command), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
