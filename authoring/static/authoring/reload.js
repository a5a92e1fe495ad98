// A rejudge still running: look again in two seconds (its rows fill in as results arrive).
setTimeout(function () { window.location.reload(); }, 2000);
