#!/usr/bin/env python3
"""Lets PyPI's (CUDA) torch wheel import on a machine without CUDA libraries.

PyPI's Linux torch wheel is built for CUDA: libtorch_cuda.so, libtorch_cpu.so
and torch/_C link libcudart, cuBLAS, cuDNN, cuFFT, cuSPARSE, NCCL, ... which
come as ~2.5 GB of nvidia-* wheels. Installed with --no-deps, `import torch`
fails at load time ("libcufile.so.0: cannot open shared object file").
Nothing on the CPU path ever calls into those libraries, so this script
writes tiny stand-ins for the missing ones (the same sonames and symbol
versions, every symbol the torch / torchvision libraries import from them
defined) into torch/lib, which the libraries' RPATH ($ORIGIN) searches.
Every stub function returns 100 (cudaErrorNoDevice, a failure status in the
other libraries' enums too), so torch.cuda.is_available() is False; no data
symbol is ever read on the CPU path.

Usage: python cuda_stubs.py SITE_PACKAGES [--cc gcc]
Idempotent; lists the stubs it wrote in torch/lib/RECQ_CUDA_STUBS.txt.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

MARKER = "RECQ_CUDA_STUBS.txt"


def elf_files(site):
    files = []
    for pkg in ("torch", "torchvision"):
        root = os.path.join(site, pkg)
        files += glob.glob(os.path.join(root, "*.so")) + glob.glob(os.path.join(root, "lib", "*.so*"))
    return sorted(f for f in files if os.path.isfile(f) and not os.path.islink(f))


def needed(path):
    out = subprocess.run(["readelf", "-d", "-W", path], capture_output=True, text=True).stdout
    return re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)


def undefined_symbols(path):
    """(name, version or None, type) of every undefined dynamic symbol."""
    out = subprocess.run(["readelf", "--dyn-syms", "-W", path], capture_output=True, text=True).stdout
    syms = []
    for line in out.splitlines():
        f = line.split()
        if len(f) < 8 or f[6] != "UND" or not f[7]:
            continue
        name, _, version = f[7].partition("@")
        version = version.lstrip("@").split(" ")[0] or None
        syms.append((name, version, f[3]))
    return syms


def defined_symbols(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.strip()}


# The CUDA libraries (runtime, driver, cuBLAS, cuDNN, cuFFT, cuFile,
# cuSPARSE(Lt), cuSOLVER, CUPTI, NVRTC, NCCL, NVSHMEM): every one a torch
# library links and the installed wheels do not ship is stubbed, even where
# the machine has a CUDA toolkit of its own (this project's machines do: 13.0
# under /usr/local): a real library of another version next to stubs would be
# a mix nobody tested. Anything else comes from the system as usual.
CUDA = re.compile(r"^lib(cu|nv|nccl)")


def shipped(soname, search_dirs):
    return any(os.path.exists(os.path.join(d, soname)) for d in search_dirs)


def version_files(path):
    """{version name: library file} from the verneed section."""
    out = subprocess.run(["readelf", "-V", "-W", path], capture_output=True, text=True).stdout
    files, current = {}, None
    for line in out.splitlines():
        m = re.search(r"File: (\S+)", line)
        if m:
            current = m.group(1)
            continue
        m = re.search(r"Name: (\S+)", line)
        if m and current:
            files[m.group(1)] = current
    return files


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("site_packages")
    p.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    args = p.parse_args()
    torch_lib = os.path.join(args.site_packages, "torch", "lib")
    if not os.path.isdir(torch_lib):
        sys.exit(f"{torch_lib}: no torch installed there")
    marker = os.path.join(torch_lib, MARKER)
    stubbed = set(open(marker).read().split()) if os.path.exists(marker) else set()
    files = [f for f in elf_files(args.site_packages) if os.path.basename(f) not in stubbed]
    search = {os.path.dirname(f) for f in files} | {torch_lib}
    search.add(os.path.join(args.site_packages, "torchvision.libs"))
    missing = sorted({n for f in files for n in needed(f)
                      if n in stubbed or (CUDA.match(n) and not shipped(n, search))})
    if not missing:
        print("cuda_stubs: every library torch needs is present; nothing to do")
        return 0
    defined = set()
    for f in files:
        defined |= defined_symbols(f)
    for lib in ("libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1"):
        for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64"):
            if os.path.exists(os.path.join(d, lib)):
                defined |= defined_symbols(os.path.join(d, lib))
                break
    # Versioned imports name their library through the verneed section;
    # unversioned ones (NCCL, cuFile, cuSPARSELt export no versions) that no
    # real library defines go to every unversioned stub.
    kinds = {m: {} for m in missing}                 # soname -> {symbol: type}
    by_version = {m: {} for m in missing}            # soname -> {version: {symbols}}
    loose = {}
    for f in files:
        vfiles = version_files(f)
        for name, version, kind in undefined_symbols(f):
            lib = vfiles.get(version)
            if lib in kinds:
                kinds[lib][name] = kind
                by_version[lib].setdefault(version, set()).add(name)
            elif version is None and name not in defined:
                loose[name] = kind
    for m in missing:
        if not by_version[m]:
            kinds[m].update(loose)
    with tempfile.TemporaryDirectory() as tmp:
        for soname in missing:
            src = os.path.join(tmp, "stub.c")
            with open(src, "w") as c:
                c.write("/* generated by recq bench/models/cuda_stubs.py: no CUDA here */\n")
                for name, kind in sorted(kinds[soname].items()):
                    if kind == "OBJECT":
                        c.write(f"char {name}[256] __attribute__((aligned(64)));\n")
                    elif kind == "TLS":
                        c.write(f"__thread char {name}[64];\n")
                    else:
                        c.write(f"int {name}(void) {{ return 100; }}\n")
            cmd = [args.cc, "-shared", "-fPIC", "-O1", "-w", "-o", os.path.join(torch_lib, soname),
                   f"-Wl,-soname,{soname}", src]
            if by_version[soname]:
                # One version node per version the importers name (normally
                # the soname; NVSHMEM's is "NVSHMEM"); a symbol imported under
                # several versions gets the first.
                seen = set()
                vs = os.path.join(tmp, "stub.map")
                with open(vs, "w") as v:
                    for version in sorted(by_version[soname]):
                        names = sorted(by_version[soname][version] - seen)
                        seen |= set(names)
                        body = f"global: {'; '.join(names)}; " if names else ""
                        v.write(f"{version} {{ {body}}};\n")
                    v.write("RECQ_STUB_LOCAL { local: *; };\n")
                cmd.append(f"-Wl,--version-script,{vs}")
            subprocess.run(cmd, check=True)
        print(f"cuda_stubs: {len(missing)} stub libraries in {torch_lib}: {' '.join(missing)}")
    with open(marker, "w") as f:
        f.write("\n".join(missing) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
