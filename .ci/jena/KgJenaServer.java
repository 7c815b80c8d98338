// A SPARQL 1.1 Protocol query endpoint over a Jena TDB2 dataset, for kg's engine tests.
//
// Debian packages Jena's libraries (libapache-jena-java) but not Fuseki, so this small
// server stands in for it: Jena's own parser, query engine, TDB2 storage and result writers
// do the work; this file only speaks HTTP. It binds 127.0.0.1 only, answers GET and POST
// (form or application/sparql-query) on /sparql, reads the union of the named graphs as the
// default graph (TDB2's unionDefaultGraph, as kg does), and picks the answer's media type
// from the Accept header, falling back to SPARQL JSON (SELECT, ASK) or Turtle (CONSTRUCT,
// DESCRIBE) as Fuseki does. Usage: java -cp JENA_CLASSPATH KgJenaServer.java TDB2_DIR PORT
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.jena.query.Dataset;
import org.apache.jena.query.Query;
import org.apache.jena.query.QueryExecution;
import org.apache.jena.query.QueryFactory;
import org.apache.jena.query.ResultSetFormatter;
import org.apache.jena.query.Syntax;
import org.apache.jena.rdf.model.Model;
import org.apache.jena.riot.Lang;
import org.apache.jena.riot.RDFDataMgr;
import org.apache.jena.system.Txn;
import org.apache.jena.tdb2.TDB2;
import org.apache.jena.tdb2.TDB2Factory;

public class KgJenaServer {
    static final String[] RESULT_TYPES = {
        "application/sparql-results+json", "application/sparql-results+xml",
        "text/csv", "text/tab-separated-values", "application/json"};
    static final String[] GRAPH_TYPES = {
        "text/turtle", "application/n-triples", "application/rdf+xml", "application/ld+json",
        "text/plain"};

    public static void main(String[] args) throws Exception {
        Dataset dataset = TDB2Factory.connectDataset(args[0]);
        dataset.getContext().set(TDB2.symUnionDefaultGraph, true);
        int port = Integer.parseInt(args[1]);
        HttpServer server = HttpServer.create(
            new InetSocketAddress(InetAddress.getByName("127.0.0.1"), port), 50);
        server.createContext("/sparql", exchange -> {
            try {
                handle(dataset, exchange);
            } catch (Throwable e) {
                send(exchange, 500, "text/plain", ("Jena: " + e).getBytes(StandardCharsets.UTF_8));
            } finally {
                exchange.close();
            }
        });
        server.setExecutor(Executors.newFixedThreadPool(4));
        server.start();
        System.err.println("KgJenaServer: listening on http://127.0.0.1:" + port + "/sparql");
    }

    static String param(String form, String name) {
        if (form == null) return null;
        for (String pair : form.split("&")) {
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            if (key.equals(name)) {
                return eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            }
        }
        return null;
    }

    static void handle(Dataset dataset, HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String text;
        if (method.equals("GET")) {
            text = param(exchange.getRequestURI().getRawQuery(), "query");
        } else if (method.equals("POST")) {
            String body = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            String type = String.valueOf(exchange.getRequestHeaders().getFirst("Content-Type"));
            text = type.startsWith("application/sparql-query") ? body : param(body, "query");
        } else {
            send(exchange, 405, "text/plain", "GET or POST a query".getBytes(StandardCharsets.UTF_8));
            return;
        }
        if (text == null) {
            send(exchange, 400, "text/plain", "no query= parameter".getBytes(StandardCharsets.UTF_8));
            return;
        }
        Query query;
        try {
            query = QueryFactory.create(text, Syntax.syntaxSPARQL_11);
        } catch (Exception e) {
            send(exchange, 400, "text/plain", ("Parse error: " + e.getMessage()).getBytes(StandardCharsets.UTF_8));
            return;
        }
        boolean graph = query.isConstructType() || query.isDescribeType();
        String accept = exchange.getRequestHeaders().getFirst("Accept");
        String type = negotiate(accept, graph ? GRAPH_TYPES : RESULT_TYPES);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Txn.executeRead(dataset, () -> {
            try (QueryExecution exec = QueryExecution.dataset(dataset).query(query)
                    .timeout(300, TimeUnit.SECONDS).build()) {
                write(exec, query, type, out);
            }
        });
        send(exchange, 200, type + "; charset=utf-8", out.toByteArray());
    }

    static void write(QueryExecution exec, Query query, String type, OutputStream out) {
        if (query.isSelectType()) {
            var results = exec.execSelect();
            switch (type) {
                case "application/sparql-results+xml" -> ResultSetFormatter.outputAsXML(out, results);
                case "text/csv" -> ResultSetFormatter.outputAsCSV(out, results);
                case "text/tab-separated-values" -> ResultSetFormatter.outputAsTSV(out, results);
                default -> ResultSetFormatter.outputAsJSON(out, results);
            }
        } else if (query.isAskType()) {
            boolean answer = exec.execAsk();
            switch (type) {
                case "application/sparql-results+xml" -> ResultSetFormatter.outputAsXML(out, answer);
                case "text/csv" -> ResultSetFormatter.outputAsCSV(out, answer);
                case "text/tab-separated-values" -> ResultSetFormatter.outputAsTSV(out, answer);
                default -> ResultSetFormatter.outputAsJSON(out, answer);
            }
        } else {
            Model model = query.isConstructType() ? exec.execConstruct() : exec.execDescribe();
            Lang lang = switch (type) {
                case "application/n-triples", "text/plain" -> Lang.NTRIPLES;
                case "application/rdf+xml" -> Lang.RDFXML;
                case "application/ld+json" -> Lang.JSONLD;
                default -> Lang.TURTLE;
            };
            RDFDataMgr.write(out, model, lang);
        }
    }

    /** The offered type the Accept header rates highest (ties: the client's order); else the first. */
    static String negotiate(String accept, String[] offers) {
        if (accept == null || accept.isBlank()) return offers[0];
        String best = null;
        double bestQ = 0;
        for (String part : accept.split(",")) {
            String[] bits = part.trim().split(";");
            String range = bits[0].trim().toLowerCase();
            double q = 1.0;
            for (int i = 1; i < bits.length; i++) {
                String b = bits[i].trim();
                if (b.startsWith("q=")) {
                    try { q = Double.parseDouble(b.substring(2)); } catch (NumberFormatException e) { q = 0; }
                }
            }
            for (String offer : offers) {
                boolean match = range.equals(offer) || range.equals("*/*")
                    || (range.endsWith("/*") && offer.startsWith(range.substring(0, range.length() - 1)));
                if (match && q > bestQ) {
                    best = range.contains("*") ? offers[0] : offer;
                    bestQ = q;
                }
            }
        }
        return best == null ? offers[0] : best;
    }

    static void send(HttpExchange exchange, int status, String type, byte[] body) throws IOException {
        exchange.getResponseHeaders().set("Content-Type", type);
        exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
        if (body.length > 0) exchange.getResponseBody().write(body);
    }
}
