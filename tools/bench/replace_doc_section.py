#!/usr/bin/env python3
"""Replaces the section between `<!-- MARK:begin` and `<!-- MARK:end -->` (that line included) in a
Markdown file with the contents of SECTION_FILE, or appends SECTION_FILE when the file has no such
section. Used by the tools/bench/make_*_md.sh scripts that own one section of docs/benchmarks.md.
Usage: replace_doc_section.py MARK DOC SECTION_FILE"""
import re
import sys

if len(sys.argv) != 4:
    sys.exit(__doc__.splitlines()[-1])
mark, doc_path, section_path = sys.argv[1:]
doc, section = open(doc_path).read(), open(section_path).read()
pattern = re.compile(r'<!-- ' + re.escape(mark) + r':begin.*?<!-- ' + re.escape(mark) + r':end -->\n', re.S)
doc = pattern.sub(lambda m: section, doc) if pattern.search(doc) else doc.rstrip('\n') + '\n\n' + section
open(doc_path, 'w').write(doc)
