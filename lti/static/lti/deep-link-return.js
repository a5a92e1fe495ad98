// Send the signed deep-linking answer back to the LMS at once; the button is there if scripts are off.
document.getElementById("lti-deep-link-return").submit();
