// Loads MathJax once the page has loaded, so that a phone shows the text first. Only on a site
// built without Node.js: otherwise the build has typeset every formula (see _ext/page_loading).
(function () {
  var src = new URL(document.currentScript.dataset.mathjax, document.currentScript.src).href;

  function load() {
    var script = document.createElement("script");
    script.src = src;
    script.async = true;
    document.head.appendChild(script);
  }

  if (document.readyState === "complete") {
    load();
  } else {
    window.addEventListener("load", load);
  }
})();
