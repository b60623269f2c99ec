import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

// The import graph of a source folder, for layers.test.ts and import-cycles.test.ts. TypeScript's own
// scanner finds the specifiers, so an import shown in a comment (a TSDoc `@example`) or a string is
// not one, and type-only imports, re-exports and `import()` types count like any other.

/** The `.ts` and `.tsx` files below `folder`, as paths relative to it with forward slashes. */
export function sourceFiles(folder: string, below = folder): string[] {
  return readdirSync(below, { withFileTypes: true }).flatMap((entry) => {
    const path = join(below, entry.name);
    if (entry.isDirectory()) return sourceFiles(folder, path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [relative(folder, path).replaceAll('\\', '/')] : [];
  });
}

/** The relative module specifiers a text imports or re-exports, type-only and dynamic ones included. */
export function relativeSpecifiers(text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((file) => file.fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'));
}

/**
 * The modules a file of `folder` imports, as paths relative to `folder`: a `.js` specifier names its
 * `.ts` or `.tsx` source. A target outside `folder` keeps its `../` path; assets (`.css`) are left out.
 */
export function importsOf(folder: string, file: string): string[] {
  return relativeSpecifiers(readFileSync(join(folder, file), 'utf8')).flatMap((specifier) => {
    const target = normalize(join(dirname(file), specifier)).replaceAll('\\', '/');
    if (!/\.jsx?$/.test(target)) return /\.tsx?$/.test(target) ? [target] : [];
    const source = target.replace(/\.js(x?)$/, '.ts$1');
    const tsx = source.replace(/\.ts$/, '.tsx');
    return [!existsSync(join(folder, source)) && existsSync(join(folder, tsx)) ? tsx : source];
  });
}

/** The import graph of a folder: each source file and the modules it imports. */
export function importGraph(folder: string): Map<string, string[]> {
  return new Map(sourceFiles(folder).map((file) => [file, importsOf(folder, file)]));
}

/**
 * Every import circle of a graph, one per strongly connected component (Tarjan), each written as a path
 * from its first module back to it (`a.ts → b.ts → a.ts`) and the component's other modules. A module
 * that imports itself is a circle too.
 */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const lowLink = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (module: string): void => {
    index.set(module, index.size);
    lowLink.set(module, index.get(module)!);
    stack.push(module);
    onStack.add(module);
    for (const next of graph.get(module) ?? []) {
      if (!index.has(next)) {
        visit(next);
        lowLink.set(module, Math.min(lowLink.get(module)!, lowLink.get(next)!));
      } else if (onStack.has(next)) lowLink.set(module, Math.min(lowLink.get(module)!, index.get(next)!));
    }
    if (lowLink.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1 || (graph.get(module) ?? []).includes(module)) components.push(component.sort());
  };
  for (const module of [...graph.keys()].sort()) if (!index.has(module)) visit(module);
  return components
    .map((component) => {
      const cycle = cycleThrough(graph, new Set(component), component[0]!);
      const rest = component.filter((member) => !cycle.includes(member));
      return cycle.join(' → ') + (rest.length === 0 ? '' : ` (and ${rest.join(', ')} in the same circle)`);
    })
    .sort();
}

/** The shortest path from `start` back to itself within one component (breadth first). */
function cycleThrough(graph: ReadonlyMap<string, readonly string[]>, component: ReadonlySet<string>, start: string): string[] {
  const previous = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const module = queue[i]!;
    for (const next of graph.get(module) ?? []) {
      if (!component.has(next)) continue;
      if (next === start) {
        const between: string[] = [];
        for (let step = module; step !== start; step = previous.get(step)!) between.unshift(step);
        return [start, ...between, start];
      }
      if (!previous.has(next)) {
        previous.set(next, module);
        queue.push(next);
      }
    }
  }
  return [start, start];
}
