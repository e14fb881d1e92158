//! The Pareto front: the candidates no other candidate beats on every objective.

/// Indices of the non-dominated rows of `points` (each row: one value per objective, larger is
/// better), in input order. Rows with a NaN are never on the front.
pub fn front(points: &[Vec<f64>]) -> Vec<usize> {
    let dominates = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).all(|(x, y)| x >= y) && a.iter().zip(b).any(|(x, y)| x > y)
    };
    (0..points.len())
        .filter(|&i| {
            points[i].iter().all(|x| !x.is_nan())
                && !(0..points.len()).any(|j| {
                    j != i
                        && points[j].iter().all(|x| !x.is_nan())
                        && dominates(&points[j], &points[i])
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn dominated_points_are_left_out() {
        let p = vec![
            vec![1.0, 5.0],
            vec![2.0, 4.0],
            vec![1.5, 3.0],
            vec![3.0, 1.0],
            vec![f64::NAN, 9.0],
        ];
        assert_eq!(super::front(&p), vec![0, 1, 3]);
        assert_eq!(super::front(&[vec![1.0], vec![2.0], vec![2.0]]), vec![1, 2]);
    }
}
