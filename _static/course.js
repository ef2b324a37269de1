// sphinx-togglebutton names the button that opens a folded solution in English ("Toggle hidden
// content"); once its script has made the buttons, name them in Korean (see _ext/accessibility.py).
window.addEventListener("load", () => {
  document
    .querySelectorAll('button.toggle-button[aria-label="Toggle hidden content"]')
    .forEach((button) => button.setAttribute("aria-label", "펼치기"));
});
