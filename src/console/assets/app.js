// Placeholder: the pages helper's app.js replaces this.
"use strict";
