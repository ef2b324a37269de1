// Draws every interactive figure of the page with plotly.js (loaded before this script) from
// the specification next to it, then hides the static picture. Print shows the picture
// (_static/course.css); without JavaScript it stays.
(function () {
  function drawAll() {
    document.querySelectorAll("div.course-interactive").forEach(function (el) {
      var spec = JSON.parse(el.nextElementSibling.textContent);
      window.Plotly.newPlot(el, spec.data, spec.layout, spec.config).then(function () {
        var figure = el.closest("figure");
        if (figure) figure.classList.add("course-interactive-ready");
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", drawAll);
  } else {
    drawAll();
  }
})();
