// kg's query page: YASGUI against this server's /sparql, with the named queries as examples.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kg-examples-data").textContent);
  var examples = data.examples;
  var endpoint = new URL("/sparql", window.location.href).toString();
  var fallback =
    "PREFIX kg: <https://w3id.org/kg/ontology#>\n" +
    "PREFIX dcterms: <http://purl.org/dc/terms/>\n\n" +
    "# Papers with the most code repositories; each paper once, however many graphs state it.\n" +
    "SELECT ?paper (MIN(?t) AS ?title) (MIN(?d) AS ?date) (COUNT(DISTINCT ?repo) AS ?repositories)\n" +
    "WHERE {\n  ?paper a kg:Paper ; dcterms:title ?t .\n  OPTIONAL { ?paper dcterms:issued ?d }\n" +
    "  OPTIONAL { ?paper kg:hasRepository ?repo }\n}\nGROUP BY ?paper\n" +
    "ORDER BY DESC(?repositories) ?title\nLIMIT 25\n";
  var yasgui = new Yasgui(document.getElementById("yasgui"), {
    requestConfig: { endpoint: endpoint, method: "POST" },
    endpointCatalogueOptions: { getData: function () { return [{ endpoint: endpoint }]; } },
    copyEndpointOnNewTab: true,
    persistenceId: null,
    yasqe: { value: fallback },
    yasr: { prefixes: data.prefixes },
  });
  // The server reads kg's usual prefixes without PREFIX lines: so does the editor's checker
  // (its parser state starts with them instead of none), in every tab.
  function knowPrefixes(tab) {
    var yasqe = tab && tab.getYasqe && tab.getYasqe();
    if (!yasqe || yasqe.kgPrefixes) return;
    var mode = yasqe.getMode();
    var start = mode.startState;
    mode.startState = function () {
      var state = start.apply(this, arguments);
      Object.keys(data.prefixes).forEach(function (p) { state.prefixes[p] = data.prefixes[p]; });
      return state;
    };
    yasqe.kgPrefixes = true;
    yasqe.setValue(yasqe.getValue());
  }
  knowPrefixes(yasgui.getTab());
  yasgui.on("tabChange", function (_, tab) { knowPrefixes(tab); });
  yasgui.on("tabSelect", function () { knowPrefixes(yasgui.getTab()); });
  var select = document.getElementById("kg-examples");
  var summary = document.getElementById("kg-summary");
  examples.forEach(function (example, i) {
    var option = document.createElement("option");
    option.value = String(i);
    option.textContent = example.name;
    option.title = example.summary;
    select.appendChild(option);
  });
  select.addEventListener("change", function () {
    var example = examples[Number(select.value)];
    if (!example) return;
    summary.textContent = example.name + ": " + example.summary;
    var tab = yasgui.getTab();
    tab.setEndpoint(endpoint);
    tab.getYasqe().setValue(example.query);
  });
  window.kgYasgui = yasgui;
})();
