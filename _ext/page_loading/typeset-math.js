// Typesets the site's formulas once, at build time, with the same MathJax the pages would load
// (the offline copy of sphinx-mathjax-offline): reads {"mathjax": folder, "fontURL": url,
// "items": [[tex, display], ...]} as JSON on stdin and writes {"html": [...], "boxes": [...],
// "css": "..."}: each formula as MathJax's CommonHTML (with the MathML that screen readers
// read), its size as MathJax lays it out ([width, height above the baseline, depth below it],
// in em of the formula's font; text in \text{} is estimated, as MathJax cannot measure text
// outside a browser), and the one stylesheet all of them need. Run by _ext/page_loading after
// the HTML build.
const chunks = [];
process.stdin.on("data", (chunk) => chunks.push(chunk));
process.stdin.on("end", () => {
  const input = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  require(input.mathjax + "/node-main.js").init({
    loader: {
      paths: { mathjax: input.mathjax },
      load: ["input/tex", "output/chtml", "a11y/assistive-mml", "adaptors/liteDOM"],
    },
    chtml: { fontURL: input.fontURL },
    startup: { typeset: false },
  }).then(async (MathJax) => {
    const adaptor = MathJax.startup.adaptor;
    const doc = MathJax.startup.document;
    const html = [];
    const boxes = [];
    for (const [tex, display] of input.items) {
      // The promise loads any TeX extension the formula needs, so the second pass, which
      // keeps the formula's MathItem to ask its size, runs with everything loaded.
      html.push(adaptor.outerHTML(await MathJax.tex2chtmlPromise(tex, { display })));
      const item = new doc.options.MathItem(tex, doc.inputJax[0], display);
      item.start.node = adaptor.body(doc.document);
      item.setMetrics(16, 8, 80 * 16, 100000, 1); // MathDocument.convert's defaults
      item.convert(doc);
      const box = doc.outputJax.getBBox(item, doc);
      boxes.push([box.w, box.h, box.d].map((x) => Math.round(x * 1000) / 1000));
    }
    const css = adaptor.textContent(MathJax.chtmlStylesheet());
    process.stdout.write(JSON.stringify({ html, boxes, css }));
  }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
});
