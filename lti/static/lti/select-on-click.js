// A click in one of the URLs to paste into the LMS selects all of it.
document.addEventListener("click", function (event) {
  var field = event.target;
  if (field instanceof HTMLInputElement && field.hasAttribute("data-select-on-click")) field.select();
});
