// Typesets the site's formulas once, at build time, with the same MathJax the pages would load
// (the offline copy of sphinx-mathjax-offline): reads {"mathjax": folder, "fontURL": url,
// "items": [[tex, display], ...]} as JSON on stdin and writes {"html": [...], "css": "..."}:
// each formula as MathJax's CommonHTML (with the MathML that screen readers read), and the one
// stylesheet all of them need. Run by _ext/page_loading after the HTML build.
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
    const html = [];
    for (const [tex, display] of input.items) {
      html.push(adaptor.outerHTML(await MathJax.tex2chtmlPromise(tex, { display })));
    }
    const css = adaptor.textContent(MathJax.chtmlStylesheet());
    process.stdout.write(JSON.stringify({ html, css }));
  }).catch((error) => {
    console.error(error);
    process.exit(1);
  });
});
