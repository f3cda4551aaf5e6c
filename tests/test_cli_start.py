"""What ``workbench`` loads to start, and ``workbench bench``: the benchmarks live beside the package
(``benchmarks/``, only in a checkout), are imported only when the command runs, and an installed
package without them says where to run them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import workbench.cli
from benchmarks import child_env
from workbench.cli import main

ROOT = Path(__file__).resolve().parent.parent
NOT_INSTALLED = ("error: the benchmarks are not part of the installed package: run them from a checkout of the "
                 "repository with `python -m benchmarks ...`")


def _python(code: str, *, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, check=False,
                          timeout=120)


def test_help_imports_neither_the_benchmarks_nor_the_ui() -> None:
    done = _python("import sys; from workbench.cli import main; code = main(['--help'], standalone_mode=False); "
                   "print(code); print(sorted(sys.modules))", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    *shown, code, modules = done.stdout.strip().splitlines()
    assert code == "0" and any(line.lstrip().startswith("bench ") for line in shown)
    loaded = ast.literal_eval(modules)
    assert "workbench.cli" in loaded
    assert [m for m in loaded if m.split(".")[0] in {"benchmarks", "streamlit"} or m.startswith("workbench.bench")] == []


def test_the_package_never_imports_the_benchmarks_at_module_level() -> None:
    def top_level(tree: ast.AST) -> list[ast.AST]:  # statements outside functions and classes
        out: list[ast.AST] = []
        for node in ast.iter_child_nodes(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                out += [node, *top_level(node)]
        return out

    offenders = []
    for path in sorted((ROOT / "workbench").rglob("*.py")):
        for node in top_level(ast.parse(path.read_text(encoding="utf-8"))):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else [])
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "benchmarks"]
    assert offenders == []


def test_bench_hands_its_arguments_to_the_benchmarks_group() -> None:
    from benchmarks.cli import bench

    shown = CliRunner().invoke(main, ["bench", "--help"])
    assert shown.exit_code == 0, shown.output
    assert "Usage: main bench [OPTIONS] COMMAND [ARGS]..." in shown.output
    assert sorted(bench.commands) == ["access", "all", "ask", "audit", "conversations", "encoders", "gate", "load", "recall",
                                      "recall-speed", "serve"]
    assert all(f"  {name} " in shown.output for name in bench.commands)
    ask = CliRunner().invoke(main, ["bench", "ask", "--help"])
    assert ask.exit_code == 0 and "--pyshacl-max SIZE" in ask.output and "Usage: main bench ask [OPTIONS]" in ask.output
    bad = CliRunner().invoke(main, ["bench", "ask", "--sizes", "ten"])
    assert bad.exit_code == 2 and "--sizes" in bad.output
    unknown = CliRunner().invoke(main, ["bench", "nothing"])
    assert unknown.exit_code == 2 and "No such command 'nothing'" in unknown.output


def test_bench_puts_the_checkout_on_the_path_when_only_the_package_is_importable(tmp_path: Path) -> None:
    # workbench imported from the checkout, then the checkout taken off sys.path (as an editable
    # install that maps only the package): `workbench bench` finds benchmarks/ beside it.
    code = (f"import sys; sys.path.insert(0, {str(ROOT)!r}); import workbench.cli; "
            f"sys.path[:] = [p for p in sys.path if p not in ('', {str(ROOT)!r})]; "
            "import importlib.util; assert importlib.util.find_spec('benchmarks') is None; "
            "from workbench.cli import main; main(['bench', '--help'])")
    done = _python(code, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Commands:" in done.stdout and "  audit " in done.stdout


def test_python_m_benchmarks_runs_the_same_group(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--help"], cwd=ROOT, capture_output=True, text=True,
                          check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage: python -m benchmarks [OPTIONS] COMMAND [ARGS]..." in done.stdout
    assert all(f"  {name} " in done.stdout for name in ("all", "ask", "audit", "load", "recall", "serve"))
    # a child of a benchmark starts elsewhere (its work directory) and still finds them
    child = subprocess.run([sys.executable, "-m", "benchmarks.synth", "--worlds", "1", str(tmp_path / "w.nq")],
                           cwd=tmp_path, env=child_env(), capture_output=True, text=True, check=False, timeout=120)
    assert child.returncode == 0, child.stderr
    assert (tmp_path / "w.nq").stat().st_size > 0


@pytest.mark.parametrize("args", [["bench"], ["bench", "--help"], ["bench", "ask", "--help"],
                                  ["bench", "load", "--sizes", "1w"]])
def test_bench_without_a_checkout_says_where_to_run_them(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    monkeypatch.setattr(workbench.cli, "_checkout", lambda: None)  # an installed package: no benchmarks/
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.stdout == "" and result.stderr == NOT_INSTALLED + "\n"
