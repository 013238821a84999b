"""Exact point sets for the reliability tests.

A point set is a dict keyed by (measurement, tags, time) -- tags a sorted
tuple of (key, value) -- whose value is the dict of fields, each field a
(type, value) pair with type one of "integer", "float", "string",
"boolean". InfluxDB stores exactly that: a second write of the same key
merges its fields over the first, so the same rule is applied when a line
protocol text is parsed, and "no point doubled" means "no key the source
does not have".

    want = parse_lp(convert_output)          # what perfship convert makes
    got = db_points(influx, "perf", measurements(want))
    problems = diff(want, got)               # [] when identical

Comparison is exact: floats are compared as the doubles both sides parse,
integers as Python ints, strings byte for byte after unescaping.

Because the server merges a second write of a point into the first, a
query cannot show that a point was sent twice. The fault proxy's request
log can: acked_counts(proxy.requests) counts, per line, the write requests
that were answered 2xx while holding it.

    twice = [k for k, n in acked_counts(proxy.requests).items() if n > 1]
"""
import collections
import re

from faultproxy import acked_writes
from harness import DatabaseNotFound

_INT = re.compile(r"^-?[0-9]+i$")
_UINT = re.compile(r"^[0-9]+u$")
_MEASUREMENT = re.compile(r"(?:[^,\\ ]|\\.)*")  # up to the first unescaped , or space
_BOOL = {"t": True, "T": True, "true": True, "True": True, "TRUE": True,
         "f": False, "F": False, "false": False, "False": False, "FALSE": False}


def _split_unescaped(s, sep, quotes=False):
    """Splits on `sep` where it is neither escaped nor inside "..." (when
    quotes). Keeps the escapes; the caller unescapes each part."""
    parts, cur, i, inq = [], [], 0, False
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            cur.append(s[i:i + 2])
            i += 2
            continue
        if quotes and c == '"':
            inq = not inq
        elif c == sep and not inq:
            parts.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    parts.append("".join(cur))
    return parts


def _unescape(s, chars):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in chars:
            out.append(s[i + 1])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def parse_field_value(v):
    if v.startswith('"'):
        if len(v) < 2 or not v.endswith('"'):
            raise ValueError(f"bad string field {v!r}")
        return ("string", _unescape(v[1:-1], '"\\'))
    if _INT.match(v):
        return ("integer", int(v[:-1]))
    if _UINT.match(v):
        return ("unsigned", int(v[:-1]))
    if v in _BOOL:
        return ("boolean", _BOOL[v])
    return ("float", float(v))


def parse_lp_line(line):
    """(measurement, tags tuple, time or None, fields dict) of one line."""
    parts = _split_unescaped(line, " ", quotes=True)
    if len(parts) not in (2, 3):
        raise ValueError(f"not a line protocol line: {line[:200]!r}")
    head = _split_unescaped(parts[0], ",")
    meas = _unescape(head[0], ", ")
    tags = []
    for t in head[1:]:
        k, v = _split_unescaped(t, "=")
        tags.append((_unescape(k, ",= "), _unescape(v, ",= ")))
    fields = {}
    for fv in _split_unescaped(parts[1], ",", quotes=True):
        kv = _split_unescaped(fv, "=", quotes=True)
        k, v = kv[0], "=".join(kv[1:])
        fields[_unescape(k, ",= ")] = parse_field_value(v)
    t = int(parts[2]) if len(parts) == 3 else None
    return meas, tuple(sorted(tags)), t, fields


def parse_lp(text, into=None):
    pts = {} if into is None else into
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        m, tags, t, fields = parse_lp_line(line)
        pts.setdefault((m, tags, t), {}).update(fields)
    return pts


def measurements(pts):
    return sorted({k[0] for k in pts})


def _quote_ident(name):
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def db_points(influx, db, names, extra_where=""):
    """Every point of the named measurements, as a point set. A database
    that does not exist holds no points; any other failed query raises (a
    401 or a bad query is not "nothing stored")."""
    pts = {}
    for m in names:
        q = _quote_ident(m)
        try:
            # rows first: keys only grow, so the keys read afterwards cover
            # every column of these rows even while points keep arriving
            rows = influx.query(db, f"SELECT * FROM {q} {extra_where}")
            tag_rows = influx.query(db, f"SHOW TAG KEYS FROM {q}")
            field_rows = influx.query(db, f"SHOW FIELD KEYS FROM {q}")
        except DatabaseNotFound:
            return {}
        tag_keys = {r["tagKey"] for r in tag_rows}
        ftypes = {r["fieldKey"]: r["fieldType"] for r in field_rows}
        for row in rows:
            t = row.pop("time")
            row.pop("_measurement", None)
            tags, fields = [], {}
            for k, v in row.items():
                if v is None:
                    continue
                if k in tag_keys and k not in ftypes:
                    if v != "":
                        tags.append((k, v))
                    continue
                typ = ftypes.get(k)
                if typ is None:
                    raise AssertionError(f"{m}: column {k!r} is neither tag nor field")
                if typ == "float":
                    v = float(v)
                fields[k] = (typ, v)
            pts[(m, tuple(sorted(tags)), t)] = fields
    return pts


def _same_field(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "float":
        return a[1] == b[1] or (a[1] != a[1] and b[1] != b[1])
    return a[1] == b[1]


def diff(want, got, limit=8):
    """Human-readable differences between two point sets ([] = equal)."""
    out = []
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    wrong = []
    for k, f in want.items():
        g = got.get(k)
        if g is None:
            continue
        if set(f) != set(g) or any(not _same_field(f[x], g[x]) for x in f):
            wrong.append(k)
    if missing:
        out.append(f"{len(missing)} points missing, e.g. " +
                   "; ".join(repr(k) for k in sorted(missing, key=repr)[:limit]))
    if extra:
        out.append(f"{len(extra)} points that should not exist, e.g. " +
                   "; ".join(repr(k) for k in sorted(extra, key=repr)[:limit]))
    for k in wrong[:limit]:
        f, g = want[k], got[k]
        d = {x: (f.get(x), g.get(x)) for x in set(f) | set(g)
             if x not in f or x not in g or not _same_field(f[x], g[x])}
        out.append(f"{k!r}: fields differ (want, got): {d!r}")
    if len(wrong) > limit:
        out.append(f"... {len(wrong) - limit} more points with different fields")
    return out


def request_lines(req, skip=()):
    """The line protocol lines a write request's body holds, in body order,
    without those of the measurements in `skip`."""
    out = []
    for line in req.body.decode("utf-8", "replace").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if skip and _unescape(_MEASUREMENT.match(line).group(0), ", ") in skip:
            continue
        out.append(line)
    return out


def acked_counts(requests, skip=("perfship",)):
    """Per line (a point with its fields; a run's status and its summary
    are two lines of one point): in how many acknowledged (2xx) write
    requests it was. Measurements in `skip` are left out (the agent's own
    heartbeat is a new point every time)."""
    counts = collections.Counter()
    for r in acked_writes(requests):
        for line in set(request_lines(r, skip)):
            counts[line] += 1
    return counts
