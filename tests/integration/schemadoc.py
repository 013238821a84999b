"""docs/schema.md read as data: {measurement: tags, fields and their types,
sample lines}, by the rules its opening section ("How this file is
written") states, so that a test can hold the document against what
perfship really writes (test_schema_doc.py).

The rules, in short:
- A heading (`##`, `###`) that holds backticked lower-case identifiers
  names those measurements; the section runs to the next heading of its
  level or higher. What a `##` section says before its first `###` (its
  tag table, its Tags sentence) holds for every measurement of the `###`
  sections under it.
- A table whose first header cell is `tag` lists tags, one row per tag
  (every backticked identifier of the first cell).
- A paragraph that begins `Tag`, `Tags`, `Extra tag(s)` or `Tags on all`
  names tags: the backticked identifiers up to the end of its first
  sentence, but not those in a parenthesis right after a name (it
  describes the name). A measurement named there means "the tags of that
  measurement" (`as `dss_bench``); a `;` clause that begins with
  measurement names and says `also` adds its tags to those only.
- A table whose first header cell is `field` lists fields, one row per
  field or group of fields (every backticked identifier of the first
  cell); its `type` column gives the type: *int* -> integer, float, bool
  -> boolean, string. A section without a type column says its type in a
  sentence `All fields are *int*`. `<counter>Start` stands for every
  kernel counter of the "Kernel counters" paragraph.
- A row is *conditional* when its text (meaning, unit or type cell) says
  the field is not always there: see CONDITIONAL.
- Every line of every fenced block without a language is a sample line of
  line protocol.
"""
import os
import re

import harness

DOC = os.path.join(harness.SOURCE_DIR, "docs", "schema.md")

IDENT = re.compile(r"`([a-z][A-Za-z0-9_]*)`")
HEADING = re.compile(r"^(#{2,3}) (.*)$")
# Where a sentence that names tags begins: a paragraph's start or after a
# full stop ("... "Slogs"). Tags: the run's ...").
TAG_SENTENCE = re.compile(r"(?:^|(?<=[.] ))(?:Extra tags?:|Tags? on all:|Tags?:|Tag (?=`))\s*")
TYPES = (("*int*", "integer"), ("bool", "boolean"), ("string", "string"), ("float", "float"))
# Words by which a row says its field is absent on some points or in some
# eras, so that a sample that never writes it is no contradiction.
CONDITIONAL = re.compile(
    r"\babsent\b|\bpresent when\b|\bonly\b|\boptional\b|\beras?\b|\bunless\b"
    r"|\bbefore 20\d\d|\bsince 20\d\d|\bSDKs since\b|\bwithout\b|\(20\d\d",
    re.I)


class DocError(ValueError):
    """The document breaks its own rules (a table with no measurement, a
    type cell nobody can read): the message names the line."""


def _depth0(text):
    """`text` without what describes a name: a parenthesis right after a
    backticked name goes (nested ones with it); any other keeps its
    content ("the run's (`run`, `test_type`, ...)") but loses what it nests."""
    out, depth, drop = [], 0, False
    for i, c in enumerate(text):
        if c == "(":
            if depth == 0:
                drop = text[:i].rstrip().endswith("`")
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif depth == 0 or (depth == 1 and not drop):
            out.append(c)
    return "".join(out)


def _first_sentence(text):
    """Up to the first '. ' outside parentheses (or the end)."""
    depth = 0
    for i, c in enumerate(text):
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c == "." and depth == 0 and (i + 1 == len(text) or text[i + 1] in " \n"):
            return text[:i]
    return text


def _conditional(sentence, key):
    """Whether what a Tags sentence says of `key` (from its name to the
    next comma or semicolon outside parentheses) says it is not always
    there."""
    at = sentence.find(f"`{key}`")
    depth, end = 0, len(sentence)
    for i in range(at + len(key) + 2, len(sentence)):
        c = sentence[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        elif c in ",;" and depth == 0:
            end = i
            break
    return bool(CONDITIONAL.search(sentence[at:end]))


def _cells(line):
    line = line.strip()
    if not (line.startswith("|") and line.endswith("|")):
        return None
    return [c.strip() for c in line[1:-1].split("|")]


def _type_of(cell, lineno):
    for word, t in TYPES:
        if word in cell:
            return t
    raise DocError(f"docs/schema.md:{lineno}: type {cell!r} is none of *int*, float, bool, string")


class Schema:
    def __init__(self, path=DOC):
        self.path = path
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        # name -> {"tags": {k: (line, cond)}, "fields": {k: (type, line, cond)}}
        self.measurements = {}
        self.samples = []       # (line number, text)
        self.counters = self._kernel_counters()
        self._parse()

    def _kernel_counters(self):
        text = "\n".join(self.lines)
        m = re.search(r"\*\*Kernel counters\.\*\*(.*?)\n\n", text, re.S)
        if not m:
            return []
        keeps = re.search(r"keeps(.*?)\(not", m.group(1), re.S)
        return IDENT.findall(keeps.group(1) if keeps else "")

    def _m(self, name):
        return self.measurements.setdefault(name, {"tags": {}, "fields": {}, "inherit": set()})

    def _parse(self):
        lines = self.lines
        self.names = set()
        for line in lines:
            h = HEADING.match(line)
            if h:
                self.names.update(IDENT.findall(h.group(2)))
        group = []        # measurements of the current ## section
        current = []      # of the innermost section
        level = 2
        shared = {"tags": {}, "inherit": set()}  # said before the first ### of a ##
        in_code, code_lang = False, ""
        i = 0
        while i < len(lines):
            line = lines[i]
            lineno = i + 1
            if line.startswith("```"):
                in_code, code_lang = (True, line[3:].strip()) if not in_code else (False, "")
                i += 1
                continue
            if in_code:
                if not code_lang and line.strip():
                    self.samples.append((lineno, line))
                i += 1
                continue
            h = HEADING.match(line)
            if h:
                names = IDENT.findall(h.group(2))
                level = len(h.group(1))
                if level == 2:
                    group, current, shared = names, names, {"tags": {}, "inherit": set()}
                else:
                    current = names or group
                for n in current:
                    m = self._m(n)
                    m["tags"].update(shared["tags"])
                    m["inherit"] |= shared["inherit"]
                i += 1
                continue
            cells = _cells(line)
            if cells and i + 1 < len(lines) and re.match(r"^\|[-| :]+\|$", lines[i + 1].strip()):
                header = [c.lower() for c in cells]
                j = i + 2
                rows = []
                while j < len(lines) and _cells(lines[j]) is not None:
                    rows.append((j + 1, _cells(lines[j])))
                    j += 1
                self._table(header, rows, current, shared if level == 2 else None, lineno)
                i = j
                continue
            if line.strip() and not line.startswith(("- ", "* ")):
                para = [line]
                j = i + 1
                while (j < len(lines) and lines[j].strip()
                       and not lines[j].startswith(("|", "#", "```", "- ", "* "))):
                    para.append(lines[j])
                    j += 1
                text = " ".join(para)
                for t in TAG_SENTENCE.finditer(text):
                    self._tag_sentence(text[t.end():], current, shared if level == 2 else None, lineno)
                if "All fields are *int*" in text:
                    for n in current:
                        self._m(n)["default_type"] = "integer"
                i = j
                continue
            i += 1
        # the tags of the measurements a Tags sentence points at ("as `dss_bench`")
        for name, m in self.measurements.items():
            for other in sorted(m.pop("inherit")):
                for k, v in self.measurements[other]["tags"].items():
                    m["tags"].setdefault(k, v)
            m.pop("default_type", None)

    def _owners(self, current, shared, lineno, what):
        if not current and shared is None:
            raise DocError(f"docs/schema.md:{lineno}: a {what} outside any measurement's section")
        return current

    def _add_tag(self, owners, shared, k, lineno, cond):
        if shared is not None:
            shared["tags"][k] = (lineno, cond)
        for n in owners:
            self._m(n)["tags"][k] = (lineno, cond)

    def _table(self, header, rows, current, shared, lineno):
        kind = header[0]
        if kind not in ("tag", "field"):
            return
        if kind == "tag":
            owners = self._owners(current, shared, lineno, "tag table")
            for rl, cells in rows:
                cond = bool(CONDITIONAL.search(" ".join(cells[1:])))
                for k in IDENT.findall(cells[0]):
                    self._add_tag(owners, shared, k, rl, cond)
            return
        owners = self._owners(current, None, lineno, "field table")
        if len(owners) != 1:
            raise DocError(f"docs/schema.md:{lineno}: a field table in a section of "
                           f"{len(owners)} measurements ({', '.join(owners)})")
        m = self._m(owners[0])
        tcol = header.index("type") if "type" in header else None
        for rl, cells in rows:
            if tcol is not None:
                typ = _type_of(cells[tcol], rl)
            elif m.get("default_type"):
                typ = m["default_type"]
            else:
                raise DocError(f"docs/schema.md:{rl}: a field without a type (no type column, "
                               "no `All fields are *int*`)")
            rest = " ".join(c for n, c in enumerate(cells) if n > 0)
            cond = bool(CONDITIONAL.search(rest))
            keys = IDENT.findall(cells[0])
            for tmpl in re.findall(r"`<counter>([A-Za-z]+)`", cells[0]):
                if not self.counters:
                    raise DocError(f"docs/schema.md:{rl}: <counter> without a Kernel counters list")
                keys += [c + tmpl for c in self.counters]
            if not keys:
                raise DocError(f"docs/schema.md:{rl}: a field row that names no field")
            for k in keys:
                if k in m["fields"]:
                    raise DocError(f"docs/schema.md:{rl}: {owners[0]}.{k} documented twice")
                m["fields"][k] = (typ, rl, cond)

    def _tag_sentence(self, text, current, shared, lineno):
        owners = self._owners(current, shared, lineno, "Tags sentence")
        body = _first_sentence(text)
        for flat in _depth0(body).split(";"):
            idents = IDENT.findall(flat)
            named = [x for x in idents if x in self.names]
            if named and re.search(r"\balso\b", flat):
                # "`loadgen_slog_vat` also `vat`": for the named ones only
                for n in named:
                    for k in idents:
                        if k not in named:
                            self._m(n)["tags"][k] = (lineno, _conditional(body, k))
                continue
            for k in idents:
                if k in self.names:  # "as `dss_bench`": that one's tags
                    if shared is not None:
                        shared["inherit"].add(k)
                    for n in owners:
                        self._m(n)["inherit"].add(k)
                else:
                    self._add_tag(owners, shared, k, lineno, _conditional(body, k))
