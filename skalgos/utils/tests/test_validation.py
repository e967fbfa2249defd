import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from skalgos.utils.validation import (
    check_adjacency,
    check_delays,
    check_groups,
    check_point_clouds,
)


def test_check_adjacency_formats_agree():
    G = nx.petersen_graph()
    A = check_adjacency(G)
    np.testing.assert_array_equal(A.toarray(), check_adjacency(A.toarray()).toarray())
    np.testing.assert_array_equal(
        A.toarray(), check_adjacency(sp.coo_matrix(A)).toarray()
    )


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.ones((2, 3)), "square"),
        (np.array([[0, 1], [0, 0]]), "symmetric"),
        (np.eye(2), "self loops"),
        (np.array([[0, -1], [-1, 0]]), "negative"),
        (np.array([[0, np.nan], [np.nan, 0]]), "NaN"),
        (np.array([[0, 2], [2, 0]]), "0/1"),
        (nx.DiGraph([(0, 1)]), "undirected"),
    ],
)
def test_check_adjacency_errors(bad, match):
    with pytest.raises(ValueError, match=match):
        check_adjacency(bad)


@pytest.mark.parametrize("attrs", [{"weight": 0}, {"weight": -3.5}, {"weight": 7}])
def test_check_adjacency_networkx_is_structure_only(attrs):
    # an edge attribute named "weight" must not erase the edge (weight 0),
    # raise (negative) or be read as a weight: networkx input is structure
    G = nx.Graph()
    G.add_edge("a", "b", **attrs)
    G.add_edge("b", "c")
    A = check_adjacency(G)
    np.testing.assert_array_equal(A.toarray(), [[0, 1, 0], [1, 0, 1], [0, 1, 0]])


def test_check_adjacency_multigraph_edges_count_once():
    G = nx.MultiGraph([(0, 1), (0, 1), (1, 2)])
    np.testing.assert_array_equal(
        check_adjacency(G).toarray(), check_adjacency(nx.path_graph(3)).toarray()
    )


def test_check_adjacency_copies():
    A = np.array([[0.0, 1.0], [1.0, 0.0]])
    out = check_adjacency(A)
    out.data[:] = 5
    assert A[0, 1] == 1.0


def test_check_point_clouds():
    clouds, w = check_point_clouds([np.zeros((3, 2)), np.ones((5, 2))])
    assert [c.shape for c in clouds] == [(3, 2), (5, 2)]
    np.testing.assert_allclose([x.sum() for x in w], 1)
    with pytest.raises(ValueError, match="same dimension"):
        check_point_clouds([np.zeros((3, 2)), np.zeros((3, 3))])
    with pytest.raises(ValueError, match="sum to one"):
        check_point_clouds([np.zeros((2, 2))], weights=[[0.2, 0.2]])
    with pytest.raises(ValueError, match="NaN"):
        check_point_clouds([np.array([[np.nan, 0.0]])])
    with pytest.raises(ValueError, match="at least 1"):
        check_point_clouds([np.zeros((0, 2))])


def test_check_delays_and_groups():
    np.testing.assert_array_equal(check_delays(None, 3), [0, 0, 0])
    np.testing.assert_array_equal(check_delays(2, 3), [2, 2, 2])
    with pytest.raises(ValueError, match="non-negative"):
        check_delays([0, -1, 0], 3)
    with pytest.raises(ValueError, match="one entry per row"):
        check_delays([0, 1], 3)
    codes, classes = check_groups(["b", "a", "b"], 3)
    np.testing.assert_array_equal(classes[codes], ["b", "a", "b"])
    with pytest.raises(ValueError, match="required"):
        check_groups(None, 3)
    with pytest.raises(ValueError, match="one label per sample"):
        check_groups([1, 2], 3)
