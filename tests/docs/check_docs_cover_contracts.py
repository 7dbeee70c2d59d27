"""The project's own reference (docs/) covers every finding id and every
trace field that the contracts define, so a user who clones the repository
alone reads all of them.

Usage: check_docs_cover_contracts.py CONTRACTS_DIR DOCS_DIR
"""
import re
import sys
import unittest

CONTRACTS, DOCS = sys.argv[1], sys.argv[2]
del sys.argv[1:3]


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def finding_ids(text):
    return set(re.findall(r"^\| `([a-z0-9-]+)` \|", text, re.M))


def field_names(text):
    """Every snake_case JSON key of the contract: "key": in its examples and
    `key` in its prose."""
    keys = set(re.findall(r'"([a-z][a-z0-9_]*)"\s*:', text))
    keys |= {k for k in re.findall(r"`([a-z][a-z0-9_]*)`", text) if "_" in k}
    return keys


class DocsCoverContracts(unittest.TestCase):
    def test_every_finding_id_is_documented(self):
        ids = finding_ids(read(f"{CONTRACTS}/findings.md"))
        self.assertGreaterEqual(len(ids), 20, "could not read the contract's id table")
        documented = finding_ids(read(f"{DOCS}/findings.md"))
        self.assertEqual(sorted(ids - documented), [], "ids missing from docs/findings.md")

    def test_every_trace_field_is_documented(self):
        fields = field_names(read(f"{CONTRACTS}/trace-format.md"))
        self.assertGreaterEqual(len(fields), 60, "could not read the contract's fields")
        docs = read(f"{DOCS}/trace-format.md")
        missing = sorted(f for f in fields if not re.search(rf"\b{f}\b", docs))
        self.assertEqual(missing, [], "fields missing from docs/trace-format.md")

    def test_readme_points_at_docs_not_at_contracts(self):
        readme = read(f"{DOCS}/../README.md")
        self.assertNotIn("../shared", readme)
        self.assertIn("docs/findings.md", readme)
        self.assertIn("docs/trace-format.md", readme)


if __name__ == "__main__":
    unittest.main(verbosity=2)
