#!/usr/bin/env bash
# tools/check-layers.sh: the include-layer check that tools/lint.sh runs (CI runs lint.sh).
#   A unit is a file stem of the library (base, matrix, util, cudamatrix, cutool): x.h + x.cc (+ x.cu,
#   x.cuh), and a private header internal/x.h belongs to unit x. Every `#include "..."` between two
#   units is an arrow. The check fails, naming file:line, on
#     - an arrow from a module to one after it in the module order (a lower module never includes a
#       higher one);
#     - an arrow that points up the runtime's layers, or from a runtime unit to a cudamatrix unit
#       that is not part of the runtime (the containers and numerics sit above all runtime layers);
#     - any include cycle between units, except the declared mutual groups (each counts as one unit).
#   The module order, the runtime's layers (lowest first) and the mutual pairs are declared once,
#   in cudamatrix/layers.txt.
# Usage: tools/check-layers.sh [--list]   (exit 1 on any finding; --list also prints every unit's
#        layer). Prints the units that are in include cycles, if any.
set -u
cd "$(dirname "$0")/.."
table=cudamatrix/layers.txt
[ -f "$table" ] || { echo "check-layers: $table is missing" >&2; exit 2; }
list=0
[ "${1:-}" = "--list" ] && list=1

{
  # The table first, then one record per include line: "I file line target".
  sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/^/T /' "$table"
  find base matrix util cudamatrix cutool -type f \( -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh' \) |
    LC_ALL=C sort | while read -r f; do
      grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]+"' "$f" |
        sed -E "s|^([0-9]+):[^\"]*\"([^\"]+)\".*|I $f \\1 \\2|"
    done
} | awk -v list="$list" '
function unit(path,   u) {
  u = path
  sub(/\.(h|cc|cu|cuh)$/, "", u)
  sub(/\/internal\//, "/", u)
  return u
}
function module(u,   m) { m = u; sub(/\/.*/, "", m); return m }
function rep(u) { return (u in pair_of) ? pair_of[u] : u }
function add_node(u) { if (!(u in is_node)) { is_node[u] = 1; nodes[++num_nodes] = u } }
# Tarjan strongly connected components (recursive; a few hundred units).
function strong(v,   k, n, w, list_, parts) {
  index_of[v] = next_index; low[v] = next_index; next_index++
  stack[++top] = v; on_stack[v] = 1
  n = split(adj[v], parts, " ")
  for (k = 1; k <= n; k++) {
    w = parts[k]
    if (!(w in index_of)) { strong(w); if (low[w] < low[v]) low[v] = low[w] }
    else if (on_stack[w] && index_of[w] < low[v]) low[v] = index_of[w]
  }
  if (low[v] == index_of[v]) {
    num_comps++; comp_size[num_comps] = 0
    do {
      w = stack[top--]; on_stack[w] = 0
      comp_of[w] = num_comps; comp_size[num_comps]++
      comp_members[num_comps] = comp_members[num_comps] " " w
    } while (w != v)
  }
}
$1 == "T" && $2 == "modules" { for (i = 3; i <= NF; i++) module_rank[$i] = i - 2; next }
$1 == "T" && $2 == "mutual" {  # units that include each other: one node in the cycle check
  name = $3; for (i = 4; i <= NF; i++) name = name " + " $i
  for (i = 3; i <= NF; i++) pair_of[$i] = name
  next
}
$1 == "T" {  # a runtime layer: its name, then its units (stems under cudamatrix/)
  num_layers++; layer_name[num_layers] = $2
  for (i = 3; i <= NF; i++) {
    u = "cudamatrix/" $i; sub(/\/internal\//, "/", u)
    if (u in layer_of) { printf "check-layers: %s is declared twice in the layers table\n", $i; bad = 1 }
    layer_of[u] = num_layers
  }
  next
}
$1 == "I" {
  file = $2; line = $3; target = $4
  from = unit(file); to = unit(target)
  mf = module(from); mt = module(to)
  if (!(mt in module_rank) || from == to) next  # system or generated headers, or the unit itself
  seen_unit[from] = 1; seen_unit[to] = 1
  where = file ":" line
  if (module_rank[mt] > module_rank[mf]) {
    printf "%s: %s includes %s: module %s is above module %s\n", where, file, target, mt, mf; bad = 1
  }
  if (mf == "cudamatrix" && mt == "cudamatrix" && (from in layer_of)) {
    if (!(to in layer_of)) {
      printf "%s: %s (runtime layer %s) includes %s, which is above the runtime (containers and numerics)\n",
        where, file, layer_name[layer_of[from]], target; bad = 1
    } else if (layer_of[to] > layer_of[from]) {
      printf "%s: %s (runtime layer %s) includes %s, which is in the higher layer %s\n",
        where, file, layer_name[layer_of[from]], target, layer_name[layer_of[to]]; bad = 1
    }
  }
  a = rep(from); b = rep(to)
  if (a == b) next
  add_node(a); add_node(b)
  key = a SUBSEP b
  if (!(key in edge_at)) { edge_at[key] = where; adj[a] = adj[a] " " b; num_edges++ }
  next
}
END {
  for (u in layer_of) if (!(u in seen_unit)) {
    printf "check-layers: %s is declared in the layers table but no file has that stem\n", u; bad = 1
  }
  next_index = 0; top = 0
  for (i = 1; i <= num_nodes; i++) if (!(nodes[i] in index_of)) strong(nodes[i])
  cyclic = 0
  for (c = 1; c <= num_comps; c++) {
    if (comp_size[c] < 2) continue
    cyclic++
    printf "check-layers: include cycle among %d units:%s\n", comp_size[c], comp_members[c]
    for (k in edge_at) {
      split(k, ends, SUBSEP)
      if (comp_of[ends[1]] == c && comp_of[ends[2]] == c)
        printf "  %s: %s -> %s\n", edge_at[k], ends[1], ends[2]
    }
    bad = 1
  }
  if (list) {
    for (u in seen_unit) if (module(u) == "cudamatrix")
      printf "  %-40s %s\n", u, (u in layer_of) ? layer_num(u) : "above the runtime"
  }
  printf "check-layers: %d units, %d arrows, %d include cycles\n", num_nodes, num_edges, cyclic
  exit bad ? 1 : 0
}
function layer_num(u) { return layer_of[u] " " layer_name[layer_of[u]] }
'
