// Draws the page's interactive figures with plotly.js from the specification next to each,
// then hides the static picture. plotly.js (4.8 MB) is not part of the page: it is loaded only
// after the page has loaded, and only when a figure comes near the screen; each figure is drawn
// when it does. Until then, without JavaScript, and in print (_static/course.css) the static
// picture shows.
(function () {
  var PLOTLY = new URL("plotly/plotly.min.js", document.currentScript.src).href;
  var NEAR = "50% 0px"; // half a screen above or below the visible part
  var plotly = null;

  function loadPlotly() {
    if (!plotly) {
      plotly = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = PLOTLY;
        script.onload = function () { resolve(window.Plotly); };
        script.onerror = reject;
        document.head.appendChild(script);
      });
    }
    return plotly;
  }

  // Each figure is drawn at the width it was designed for (the static picture's), as the
  // picture is: on a screen narrower than that (a phone), it scrolls sideways inside its own
  // box (_static/course.css) rather than squeezing its panels and labels together. While it
  // draws, the div is laid out at zero height, so the picture stays in place until it is ready.
  function draw(el) {
    var figure = el.closest("figure") || el.parentElement;
    loadPlotly().then(function (Plotly) {
      var spec = JSON.parse(el.nextElementSibling.textContent);
      spec.layout.width = spec.layout.width || spec.layout.meta.width;
      figure.classList.add("course-interactive-drawing");
      return Plotly.newPlot(el, spec.data, spec.layout, spec.config);
    }).then(function () {
      figure.classList.add("course-interactive-ready");
      figure.classList.remove("course-interactive-drawing");
    });
  }

  function start() {
    var figures = document.querySelectorAll("div.course-interactive");
    if (!("IntersectionObserver" in window)) {
      figures.forEach(draw);
      return;
    }
    // The div stays hidden (display: none) until drawn, so its figure is what is watched
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (entry.isIntersecting) {
          observer.unobserve(entry.target);
          draw(entry.target.querySelector("div.course-interactive"));
        }
      });
    }, { rootMargin: NEAR });
    figures.forEach(function (el) { observer.observe(el.parentElement); });
  }

  if (document.readyState === "complete") {
    start();
  } else {
    window.addEventListener("load", start);
  }
})();
