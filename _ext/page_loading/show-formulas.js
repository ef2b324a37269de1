// Formulas after the first few of a page arrive as the text of a <noscript> inside a
// placeholder of their size (<mjx-lazy>, _ext/page_loading), so that a phone lays out only the
// formulas it shows. Each is put in place when it comes within a screen of the viewport, and
// all of them before the page is printed. Their MathML, which screen readers read, is in the
// page from the start.
(() => {
  const show = (lazy) => {
    const math = document.createElement("template");
    math.innerHTML = lazy.firstElementChild.textContent;
    lazy.replaceWith(math.content);
  };
  const showAll = () => document.querySelectorAll("mjx-lazy").forEach(show);
  window.addEventListener("beforeprint", showAll);
  if (!("IntersectionObserver" in window)) {
    showAll();
    return;
  }
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (entry.isIntersecting) {
        observer.unobserve(entry.target);
        show(entry.target);
      }
    }
  }, { rootMargin: "100% 0px" });
  document.querySelectorAll("mjx-lazy").forEach((lazy) => observer.observe(lazy));
})();
