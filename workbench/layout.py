"""Where Workbench's own files are: the ontology, the rules and the sample data, beside the
package in a source checkout or an editable install."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ONTOLOGY_DIR = ROOT / "ontology"
RULES_DIR = ROOT / "rules"
DATA_DIR = ROOT / "data"
