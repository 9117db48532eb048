/**
 * The console's entry: the page's router. Each page renders into `main` from the public HTTP API
 * alone, as text (never HTML), and the hash names the page, so a link or a reload lands on it.
 */
const view = document.getElementById('view');
if (view !== null) view.textContent = 'The console is being built.';
