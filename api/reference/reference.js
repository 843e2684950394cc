// Renders the document this server serves, in the page's #redoc element. A file
// of its own because the page's Content-Security-Policy runs no inline script.
Redoc.init('/openapi/v1/openapi.json', {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  pathInMiddlePanel: true,
  requiredPropsFirst: true,
  theme: { typography: { fontFamily: 'system-ui, sans-serif', headings: { fontFamily: 'system-ui, sans-serif' } } }
}, document.getElementById('redoc'));
