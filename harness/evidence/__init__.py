"""Evidence a regulator accepts: the system under test's identification, a signed, hash-chained pack of every
observation of a certify run, its offline verification, comparison and export (docs/evidence.md)."""
