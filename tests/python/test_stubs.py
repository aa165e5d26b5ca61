"""Every public name of recq (and every public member of its classes) has a stub."""

import ast
import inspect
import pathlib

import recq
import recq._recq


def stubbed():
    tree = ast.parse((pathlib.Path(recq.__file__).parent / "_recq.pyi").read_text())
    names, members = set(), {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
            members[node.name] = {n.name for n in node.body
                                  if isinstance(n, (ast.FunctionDef, ast.AnnAssign))}
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names, members


def test_every_public_name_has_a_stub():
    names, members = stubbed()
    assert set(recq.__all__) <= names, set(recq.__all__) - names
    module_names = {n for n in dir(recq._recq) if not n.startswith("_")}
    assert module_names <= names, module_names - names
    for name in recq.__all__:
        obj = getattr(recq, name)
        if not inspect.isclass(obj) or issubclass(obj, BaseException):
            continue
        public = {m for m in vars(obj) if not m.startswith("_")}
        public |= {m for m in ("__dlpack__", "__dlpack_device__") if m in vars(obj)}
        assert public <= members[name], f"{name}: {public - members[name]} lack stubs"
