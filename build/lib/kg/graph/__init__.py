"""Graph views: paper-item incidence matrices, NetworkX projections, similarity and analytics.

`kg.graph.relations` holds the vocabulary of these views without numpy, scipy or networkx;
the other modules import them."""
