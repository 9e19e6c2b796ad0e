async function main() {
  class Classifier {
    constructor(rules) { this.rules = rules; }
    kind(f) {
      const ext = f.name.split(".").pop();
      return this.rules.get(ext) ?? "other";
    }
  }
  async function listAll(id, input) {
    const out = [];
    let page = 0;
    while (page !== undefined) {
      const res = await tools.callValue(id, { ...input, page });
      out.push(...res.items);
      page = res.next;
    }
    return out;
  }
  const hits = await tools.search("list files", { limit: 3 });
  const files = await listAll(hits[0].id, { path: "." });
  const classifier = new Classifier(new Map([["ts", "code"], ["md", "docs"]]));
  const grouped = {};
  for (const f of files) {
    const k = classifier.kind(f);
    (grouped[k] ??= []).push(f);
  }
  const summary = Object.entries(grouped).map(([k, list]) => ({
    kind: k,
    count: list.length,
    bytes: list.reduce((n, f) => n + f.size, 0),
  }));
  text(`found ${files.length} files`);
  return summary;
}
return typeof main;
