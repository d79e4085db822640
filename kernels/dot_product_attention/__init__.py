"""dot_product_attention: softmax(q k^T * scale + bias, masked) v, with grouped/multi-query heads."""
