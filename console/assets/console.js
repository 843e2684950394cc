// The console's own script, from this origin (the Content-Security-Policy
// runs no inline script): the copy buttons of secrets shown once.
document.addEventListener("click", function (e) {
  var button = e.target.closest("[data-copy]");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source) return;
  var done = function () { button.textContent = "Copied"; };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(source.textContent.trim()).then(done, function () {
      button.textContent = "Select and copy by hand";
    });
  } else {
    var range = document.createRange();
    range.selectNodeContents(source);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    button.textContent = "Selected: press Ctrl+C";
  }
});
