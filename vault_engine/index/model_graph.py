"""The default model's fast graph: all-MiniLM-L6-v2 with its matrix products in int8.

The packaged model stores its weights in int8 but computes in float: each weight is turned back
into float when the model loads, and every product runs in float32.  The fast graph runs them in
int8 (onnxruntime's MatMulIntegerToFloat: each weight quantized once, per output channel), which
reads about 1.4 times the tokens per second on the same cores (docs/decisions/int8-graph.md).

Three choices keep its vectors next to the float graph's (cosine 0.997 on average, 0.994 at worst,
on the synthetic benchmark's passages) and make them depend on nothing but the text:

- each row of a product's input (one token's features) is divided by its largest magnitude before
  it is quantized, and the product's row multiplied back after: every row uses the whole int8
  range, and the quantization's scale is a constant.  onnxruntime's own dynamic quantization takes
  one scale for the whole batch, so a text's vector moved with the texts batched with it (cosine
  0.987 at worst between a text embedded alone and in a batch of 16); here it does not move at all;
- the feed-forward down-projections stay in float: their inputs, after the GELU, have outliers
  int8 cannot hold (quantized, they alone pulled the worst cosine to 0.97);
- the weights use 7 bits (-63 to 63): a CPU without VNNI multiplies int8 pairs in 16-bit sums that
  8-bit weights can overflow.

The graph is derived once per machine from the packaged model, deterministically (the same bytes
every time), into memvault's cache folder, and is read from there by every vault.  It is two files:
the graph (``....onnx``, 70 kB) and its weights beside it (``....onnx.weights``, 69 MB), which
onnxruntime maps into memory instead of reading: a process that loads the model starts in about a
third of the time and keeps only the pages it touches (docs/decisions/hooks-latency.md).  Its name holds
the recipe and a digest of the packaged model, so a new recipe or model derives a new file, and the
embedder's name holds the recipe, so vectors of one graph are never mixed with the other's.  The
digest is kept beside the graph (:data:`DIGESTS`, by the model file's path, size and change time),
so a process that loads the model does not read its 23 MB again to find the graph.

A graph is a cache, so it must heal: a truncated, corrupt or replaced graph once took every search
down for good.  The graph's own SHA-256 is recorded beside it when it is derived (:data:`CHECKS`)
and compared before the graph is used; a graph that does not match, or has no record, is derived
again, with a notice.  Hashing 69 MB costs about 0.13 s, so the record also keeps the file's
identity (inode, size, change times) as last found intact, and the graph is hashed again only when
that moved: anything that writes, truncates or replaces the file moves its change time.  A graph
that cannot be written into the cache folder (a full disk, a read-only folder, a file where the
folder should be) is derived into the next folder, the vault's own ``.memvault/models/``, with a
notice (:mod:`.notices`).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..errors import ModelUnavailable
from ..fsio import write_atomic
from . import notices

RECIPE = "q8r1"  # int8 rows scaled to their largest magnitude, 7-bit weights per channel, FFN down in float
FFN_DOWN = (1536, 384)  # the shape of all-MiniLM-L6-v2's feed-forward down-projection weights
ROW_SCALE = 2.0 / 255.0  # a row divided by its largest magnitude lies in [-1, 1]: 255 steps of this
ROW_ZERO = 128  # ... around this zero point (uint8)
WEIGHT_STEPS = 63  # a weight column's largest magnitude is 63 steps of its scale (7 bits)
EPSILON = 1e-12  # an all-zero row or column is divided by this, not by zero
LAYOUT = "w1"  # the graph's files: its weights in a file of their own (:data:`WEIGHTS`), mapped, not read
WEIGHTS = ".weights"  # beside each graph (its name + this): its weights
DIGESTS = "model-digests.json"  # the packaged model's digest by its path, size and change time
CHECKS = ".sha256.json"  # beside each graph (its name + this): its digest when derived, its identity when last intact


def graph_name(source: Path, folders: Sequence[Path] = ()) -> str:
    """The fast graph's file name for the packaged model at ``source`` (its digest read from the
    :data:`DIGESTS` file of one of ``folders`` when that knows the file as it is now)."""
    return _name(_digest(source, folders)[0])


def _name(digest: str) -> str:
    return f"all-MiniLM-L6-v2-{RECIPE}-{digest}-{LAYOUT}.onnx"


def weights(graph: Path) -> Path:
    """The file holding ``graph``'s weights."""
    return graph.with_name(graph.name + WEIGHTS)


def _source_key(source: Path) -> str:
    stat = source.stat()
    return f"{source.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"


def _digest(source: Path, folders: Sequence[Path]) -> tuple[str, bool]:
    """The packaged model's digest, and whether it was remembered (not read from the 23 MB file)."""
    key = _source_key(source)
    for folder in folders:
        try:
            known = json.loads((folder / DIGESTS).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(known, dict) and isinstance(known.get(key), str):
            return known[key], True
    hashed = hashlib.sha256()
    with source.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hashed.update(block)
    return hashed.hexdigest()[:12], False


def _remember(source: Path, folder: Path, digest: str) -> None:
    """Keep the model's digest beside its graph, so the next process need not read the model."""
    with contextlib.suppress(OSError):
        write_atomic(folder / DIGESTS, json.dumps({_source_key(source): digest}, sort_keys=True) + "\n")


def graph_folder(cache_folder: Path) -> Path:
    """Where memvault's cache folder keeps the graphs."""
    return cache_folder / "models"


def graphs_in(folder: Path) -> dict[str, int]:
    """The int8 graphs a folder holds: file name -> size in bytes (with its weights)."""
    try:
        return {p.name: p.stat().st_size + (weights(p).stat().st_size if weights(p).is_file() else 0)
                for p in sorted(folder.glob("all-MiniLM-L6-v2-*.onnx")) if p.is_file()}
    except OSError:
        return {}


def fast_graph(source: Path, folders: Sequence[Path]) -> Path:
    """The fast graph of the packaged model at ``source``: found intact in the first of ``folders``
    that holds it, else derived into the first one that can be written (a damaged graph is derived
    again; a folder that cannot take it is passed over, with a notice)."""
    digest, remembered = _digest(source, folders)
    name = _name(digest)
    for folder in folders:
        graph = folder / name
        if not graph.is_file():
            continue
        if intact(graph):
            if not remembered:
                _remember(source, folder, digest)
            return graph
        why = ("does not match the digest recorded when it was derived (truncated, corrupt or replaced)"
               if _checks(graph).exists() else "has no digest recorded (an earlier release derived it)")
        notices.note("graph-damaged", f"notice: the embedding model's int8 graph {graph} {why}; derived it again")
    problems = []
    for folder in folders:
        try:
            folder.mkdir(parents=True, exist_ok=True)
            graph = _derive(source, folder / name)
        except OSError as exc:
            problems.append(f"{folder}: {exc.strerror or exc}")
            continue
        _remember(source, folder, digest)
        _drop_single_file(folder, digest)
        if problems:
            notices.note("graph-elsewhere", f"notice: the embedding model's int8 graph cannot be written to "
                                            f"{problems[0]}; derived it into {folder} instead")
        return graph
    raise ModelUnavailable(f"the embedding model's int8 graph cannot be written ({'; '.join(problems)})")


def _checks(graph: Path) -> Path:
    return graph.with_name(graph.name + CHECKS)


def _drop_single_file(folder: Path, digest: str) -> None:
    """Remove the graph an earlier release derived of the same model as one file (weights inside)."""
    old = folder / f"all-MiniLM-L6-v2-{RECIPE}-{digest}.onnx"
    for path in (old, _checks(old)):
        with contextlib.suppress(OSError):
            path.unlink()


def _identity(graph: Path) -> str:
    """The identity of the graph's two files: inode, size, change times."""
    parts = []
    for path in (graph, weights(graph)):
        stat = path.stat()
        parts.append(f"{stat.st_ino}|{stat.st_size}|{stat.st_mtime_ns}|{stat.st_ctime_ns}")
    return "|".join(parts)


def _sha256(graph: Path) -> str:
    """The digest of the graph's two files (each one's SHA-256, hashed together)."""
    parts = []
    for path in (graph, weights(graph)):
        hashed = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                hashed.update(block)
        parts.append(hashed.hexdigest())
    return hashlib.sha256(" ".join(parts).encode()).hexdigest()


def intact(graph: Path) -> bool:
    """Whether ``graph`` holds the bytes it was derived with (hashed only when the file's identity
    moved since it was last found intact; a graph with no record is not trusted)."""
    try:
        record = json.loads(_checks(graph).read_text(encoding="utf-8"))
        identity = _identity(graph)
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or not isinstance(record.get("sha256"), str):
        return False
    if record.get("intact") == identity:
        return True
    try:
        if _sha256(graph) != record["sha256"]:
            return False
    except OSError:
        return False
    with contextlib.suppress(OSError):  # a folder that cannot be written: hashed again next time
        write_atomic(_checks(graph), json.dumps({**record, "intact": identity}, sort_keys=True) + "\n")
    return True


def discard(graph: Path) -> None:
    """Remove a graph found unusable (and its record), so the next use derives it again."""
    for path in (graph, weights(graph), _checks(graph)):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _derive(source: Path, target: Path) -> Path:
    """Write the fast graph to ``target`` and its weights beside it (each file atomically, the weights
    first: another process deriving it at the same time writes the same bytes)."""
    try:
        import onnx
        import onnxruntime as ort
    except ImportError as exc:
        raise ModelUnavailable(f"the embedding model's int8 graph needs onnx ({exc})") from None
    import tempfile  # here: loading a derived graph (a hook's prompt) does not need it

    handle, float_path = tempfile.mkstemp(suffix=".onnx", dir=target.parent)
    os.close(handle)
    float_file = Path(float_path)
    folder = Path(tempfile.mkdtemp(prefix=".derive-", dir=target.parent))
    quantized_file = folder / target.name  # its weights' file is named by the graph's final name
    try:
        # Basic optimizations fold each weight's int8-to-float conversion into a float weight, the
        # form read below; they depend on no CPU feature.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(float_file)
        options.log_severity_level = 3  # errors only
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        model = onnx.load(str(float_file))
        _quantize(model)
        onnx.save_model(model, str(quantized_file), save_as_external_data=True, all_tensors_to_one_file=True,
                        location=weights(target).name, size_threshold=1024)
        digest = _sha256(quantized_file)
        os.replace(weights(quantized_file), weights(target))
        os.replace(quantized_file, target)
        write_atomic(_checks(target), json.dumps({"sha256": digest, "intact": _identity(target)},
                                                 sort_keys=True) + "\n")
    except OSError:
        raise
    except Exception as exc:  # onnx and onnxruntime raise their own error types
        # Writing to a full disk surfaces as their errors too ("Protobuf serialization failed"):
        # the next folder is tried, and a graph that cannot be derived anywhere fails there as well.
        raise OSError(f"cannot be derived here ({type(exc).__name__}: {exc})") from None
    finally:
        float_file.unlink(missing_ok=True)
        for path in (quantized_file, weights(quantized_file)):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            folder.rmdir()
    return target


def _quantize(model: Any) -> None:
    """Turn every product of a float input with a weight (but the feed-forward down-projections)
    into an int8 one, in place: the input's rows divided by their largest magnitude and quantized with
    a constant scale, the weight per output column, the product's rows multiplied back."""
    import numpy as np
    from onnx import helper, numpy_helper

    graph = model.graph
    weights = {init.name: init for init in graph.initializer}
    constants = [numpy_helper.from_array(np.array(EPSILON, np.float32), "row_epsilon"),
                 numpy_helper.from_array(np.array(ROW_SCALE, np.float32), "row_input_scale"),
                 numpy_helper.from_array(np.array(ROW_ZERO, np.uint8), "row_input_zero")]
    nodes: list[Any] = []
    scaled: dict[str, str] = {}  # an input -> the prefix of its int8 form (Q, K and V share theirs)
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if weight is None or tuple(weight.dims) == FFN_DOWN:
            nodes.append(node)
            continue
        source, output = node.input[0], node.output[0]
        if source not in scaled:
            row = scaled[source] = f"row_scale_{len(scaled)}"
            nodes += [
                helper.make_node("Abs", [source], [f"{row}_abs"]),
                helper.make_node("ReduceMax", [f"{row}_abs"], [f"{row}_max"], axes=[-1], keepdims=1),
                helper.make_node("Max", [f"{row}_max", "row_epsilon"], [f"{row}_by"]),
                helper.make_node("Div", [source, f"{row}_by"], [f"{row}_unit"]),
                helper.make_node("QuantizeLinear", [f"{row}_unit", "row_input_scale", "row_input_zero"],
                                 [f"{row}_int8"]),
            ]
        row = scaled[source]
        values = numpy_helper.to_array(weight).astype(np.float32)
        scale = (np.maximum(np.abs(values).max(axis=0), EPSILON) / WEIGHT_STEPS).astype(np.float32)
        steps = np.clip(np.round(values / scale), -WEIGHT_STEPS, WEIGHT_STEPS).astype(np.int8)
        constants += [numpy_helper.from_array(steps, f"{weight.name}_int8"),
                      numpy_helper.from_array(scale, f"{weight.name}_scale")]
        nodes += [
            helper.make_node("MatMulIntegerToFloat",
                             [f"{row}_int8", f"{weight.name}_int8", "row_input_scale", f"{weight.name}_scale",
                              "row_input_zero"], [f"{output}_unit"], name=node.name, domain="com.microsoft"),
            helper.make_node("Mul", [f"{output}_unit", f"{row}_by"], [output]),
        ]
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [init for init in [*graph.initializer, *constants] if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
