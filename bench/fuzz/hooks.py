"""Schemathesis hooks for `npm run fuzz`: valid requests also keep the rules between fields.

JSON Schema cannot say "exactly one of cron, runAt and every" or "from before to"; the API's document
states those rules per operation in the vendor extension `x-timer-rules` (apps/api/src/docs/timer-rules.ts).
A case generated as valid (positive mode) is mapped onto them here, reading only that extension, so
`positive_data_acceptance` judges the API against everything the document says. Negative cases are left
as generated. Values that must mean something (`meaning`: a cron that fires, an IANA zone) are replaced
by ones that do. The mapping runs in `before_call`, so the examples and coverage phases get it too.
"""

import itertools
import random
import time

import schemathesis

RULES = "x-timer-rules"
KEYS = itertools.count(int(time.time()))
MINUTE_MS = 60_000
# Values a rule needs when it has to add a field (a generated one is kept when it is valid).
CRONS = ["0 */5 * * * *", "*/15 * * * *", "0 0 9 * * MON-FRI", "30 2 * * *"]
ZONES = ["UTC", "Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"]
DEFAULTS = {
    "cron": lambda: random.choice(CRONS),
    "runAt": lambda: now() + random.randint(1, 30) * 86_400_000,
    "every": lambda: random.choice(["90s", "5m", "1h30m", "1d"]),
    "jitterMs": lambda: random.randint(1, 60_000),
    "durationMs": lambda: 30 * MINUTE_MS,
    "all": lambda: True,
}


def now() -> int:
    return int(time.time() * 1000)


def given(obj, name, query=False):
    """Given as the API reads it: present and not null; in a query also not empty."""
    return isinstance(obj, dict) and obj.get(name) is not None and not (query and obj.get(name) == "")


def as_ms(value):
    """An instant as the API reads it (epoch ms, or an ISO string: left as unknown)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def put(obj, name, value, query):
    obj[name] = str(value).lower() if query and isinstance(value, bool) else (str(value) if query else value)


def apply(rules, obj, query):
    """Maps one object (a body, a query, a batch item) onto `rules`."""
    for r in rules:
        kind = r["rule"]
        if kind in ("exactlyOne", "atMostOne"):
            present = [f for f in r["fields"] if given(obj, f, query)]
            keep = present[:1]
            fallback = next((f for f in r["fields"] if f in DEFAULTS), None)
            if kind == "exactlyOne" and not keep and fallback:
                put(obj, fallback, DEFAULTS[fallback](), query)
            for f in present[1:]:
                obj.pop(f, None)
        elif kind == "exactlyOneGroup":
            groups = r["groups"]
            chosen = next((g for g in groups if any(given(obj, f, query) for f in g)), groups[-1])
            for g in groups:
                if g is not chosen:
                    for f in g:
                        obj.pop(f, None)
            for f in chosen:
                if not given(obj, f, query) and f in DEFAULTS:
                    put(obj, f, DEFAULTS[f](), query)
            if chosen == ["from", "to"]:
                obj["from"], obj["to"] = now() + 3_600_000, now() + 7_200_000
        elif kind == "excludes":
            if given(obj, r["field"], query):
                for f in r["fields"]:
                    obj.pop(f, None)
        elif kind == "requires":
            v = obj.get(r["field"]) if isinstance(obj, dict) else None
            if v is None or (query and v == "") or ("unless" in r and v == r["unless"]):
                continue
            exclusive = {f for x in rules if x["rule"] in ("exactlyOne", "atMostOne") for f in x["fields"]}
            missing = [f for f in r["fields"] if not given(obj, f, query)]
            # A missing field that would be a second schedule field, or that has no default: drop the one that needs it.
            if any(f in exclusive or f not in DEFAULTS for f in missing):
                obj.pop(r["field"], None)
                continue
            for f in r["fields"]:
                if not given(obj, f, query) or obj.get(f) in (0, "0"):
                    put(obj, f, DEFAULTS[f](), query)
        elif kind == "meaning":
            *parents, field = r["field"].split(".")
            target = obj
            for p in parents:
                target = target.get(p) if isinstance(target, dict) else None
            if not given(target, field, query):
                continue
            if r["kind"] == "cron":
                put(target, field, random.choice(CRONS), query)
            elif r["kind"] == "timeZone":
                put(target, field, random.choice(ZONES), query)
            elif r["kind"] == "interval":
                put(target, field, DEFAULTS["every"](), query)
            elif r["kind"] == "headerNames" and isinstance(target[field], dict):
                target[field] = {f"X-Fuzz-{i}": v for i, v in enumerate(target[field].values())}
        elif kind == "maxWith":
            if given(obj, r["with"], query) and isinstance(obj.get(r["field"]), int) and obj[r["field"]] > r["max"]:
                obj[r["field"]] = r["max"]
        elif kind == "fireOf":
            if given(obj, r["field"], query) and given(obj, r["timer"], query) and "-" in str(obj[r["field"]]):
                obj[r["field"]] = f"{obj[r['timer']]}-{str(obj[r['field']]).split('-', 1)[1]}"
        elif kind == "sameAs":
            pass  # applied with `each` below, where the items are

        elif kind == "each" and isinstance(obj.get(r["field"]), list):
            same = [(x["field"].split("[].")[1], x["as"]) for x in rules if x["rule"] == "sameAs" and x["field"].startswith(r["field"] + "[].")]
            for item in obj[r["field"]]:
                if isinstance(item, dict):
                    apply(r["rules"], item, query)
                    for f, other in same:
                        if given(item, f):
                            item[f] = obj.get(other)
        elif kind == "distinct" and isinstance(obj.get(r["field"]), list):
            for i, item in enumerate(obj[r["field"]]):
                if isinstance(item, dict) and r["key"] in item:
                    item[r["key"]] = f"{item[r['key']]}-{i}"
    times(rules, obj, query)


def times(rules, obj, query):
    """Instants: `future`, `notFuture`, `before` and `maxSpan` together, relative to now."""
    by = {}
    for r in rules:
        for key in ("field", "than", "from", "to"):
            name = r.get(key)
            if r["rule"] in ("future", "notFuture", "before", "maxSpan") and name and given(obj, name, query):
                by.setdefault(name, []).append(r)
    if not by:
        return
    # A request with a rule about the future (a timer's runAt, endAt) puts all its instants there.
    future = any(r["rule"] == "future" for r in rules)
    past = any(r["rule"] == "notFuture" for r in rules)
    spans = [r["maxMs"] for r in rules if r["rule"] == "maxSpan"]
    # Without a longest span the instants bound a schedule: 8 days hold a fire of every cron and interval used here.
    span = min(spans) if spans else 8 * 86_400_000
    base = now() + 3_600_000 if future else now() - span - MINUTE_MS if past else now() - span // 2
    step = max(1_000, span // 2)
    order = []
    for r in rules:
        if r["rule"] == "before":
            for name in (r["field"], r["than"]):
                if name not in order:
                    order.append(name)
    for name in by:
        if name not in order:
            order.append(name)
    for i, name in enumerate(order):
        if given(obj, name, query):
            # Keep a generated ISO string's form but not its value: the rule is about the instant.
            put(obj, name, base + i * step, query)
    for r in rules:
        if r["rule"] == "maxBuckets" and given(obj, r["field"], query):
            obj[r["field"]] = str(max(1_000, min(3_600_000, span // r["max"] + 1_000))) if query else max(1_000, span // r["max"] + 1_000)


@schemathesis.hook
def before_call(ctx, case, kwargs):
    # Every phase's cases pass here (examples and coverage cases are not drawn from the strategies that
    # `map_case` maps), each still labelled valid or not.
    meta = case.meta
    if meta is None or not meta.generation.mode.is_positive:
        return
    rules = (case.operation.definition.raw or {}).get(RULES) or []
    if isinstance(case.body, dict):
        apply(rules, case.body, False)
    if isinstance(case.query, dict):
        apply(rules, case.query, True)
    for r in rules:
        if r["rule"] == "uniqueHeader" and case.headers is not None:
            for name in [h for h in case.headers if h.lower() == r["field"].lower()]:
                case.headers[name] = f"fuzz-{next(KEYS)}"
