"""A pipeline's graph in Graphviz's dot language (DALI's Pipeline.save_graph_to_dot_file): the
operators that the outputs need (those the build keeps), an edge per input, optionally a node per
tensor between them, coloured by where each operator runs."""

# Outline colours per backend (DALI draws CPU operators blue).
_COLOURS = {"cpu": "blue", "mixed": "#5d1682", "gpu": "#76b900"}


def _kept(nodes, outputs):
    """Indices of the nodes the outputs depend on (inputs and argument inputs)."""
    kept, todo = set(), [n for n, _ in outputs]
    while todo:
        n = todo.pop()
        if n in kept:
            continue
        kept.add(n)
        todo.extend(i for i, _ in nodes[n]["inputs"])
        todo.extend(i for i, _ in nodes[n]["arg_inputs"].values())
    return sorted(kept)


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _id(nodes, n):
    return _quote("op:" + nodes[n]["name"])  # apart from the tensors' and outputs' ids


def graph_dot(nodes, outputs, show_tensors=False, use_colors=False):
    """The dot text of the graph of `nodes` (stoker.definition's records) that `outputs`
    ((node, index) pairs) need."""
    lines = ["digraph graphname {"]
    for n in _kept(nodes, outputs):
        node = nodes[n]
        style = f', color="{_COLOURS.get(node["device"], "black")}"' if use_colors else ""
        label = _quote(f'{node["name"]}\n{node["op"]} ({node["device"]})').replace("\n", "\\n")
        lines.append(f"  {_id(nodes, n)} [label={label}{style}];")
    edges = set()
    for n in _kept(nodes, outputs):
        sources = [(src, k, None) for src, k in nodes[n]["inputs"]]
        sources += [(src, k, arg) for arg, (src, k) in nodes[n]["arg_inputs"].items()]
        for src, k, arg in sources:
            edges.add((src, k, n, arg))
    tensors = {}  # (node, output) -> its lines, once each
    for src, k, n, arg in sorted(edges, key=lambda e: (e[0], e[1], e[2], e[3] or "")):
        label = f' [label="{arg}"]' if arg else ""
        if show_tensors:
            tensor = _quote(f"tensor:{nodes[src]['name']}[{k}]")
            tensors.setdefault((src, k), [f"  {tensor} [shape=box, label="
                                          f"{_quote(nodes[src]['name'] + f'[{k}]')}];",
                                          f"  {_id(nodes, src)} -> {tensor};"])
            lines.append(f"  {tensor} -> {_id(nodes, n)}{label};")
        else:
            lines.append(f"  {_id(nodes, src)} -> {_id(nodes, n)}{label};")
    lines += [line for pair in tensors.values() for line in pair]
    for i, (n, k) in enumerate(outputs):
        lines.append(f'  {_quote(f"output:{i}")} [shape=box, label="output {i}"];')
        lines.append(f'  {_id(nodes, n)} -> {_quote(f"output:{i}")};')
    lines.append("}")
    return "\n".join(lines) + "\n"
