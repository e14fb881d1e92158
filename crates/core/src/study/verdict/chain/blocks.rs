//! Block-tridiagonal linear algebra for a chain whose states are levels (queue lengths) of
//! phases (orbit sizes), where a transition moves at most one level: a quasi-birth-death
//! process. Its generator is block tridiagonal, so a linear solve is block Gaussian elimination
//! over the levels (the block Thomas algorithm) with a dense LU of each phase block, and the
//! stationary distribution is linear level reduction (Gaver, Jacobs and Latouche, "Finite
//! birth-and-death models in randomly changing environments", Adv. Appl. Prob. 16, 1984).
//! The work is `levels x phases^3`, the memory `levels x phases^2`.
//!
//! No pivoting across levels is needed: the matrices solved are generators restricted to a set
//! of states that the chain leaves (minus an M-matrix), whose Schur complements stay so, and
//! within a block the LU pivots partially.

/// A dense square matrix, row major.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    pub n: usize,
    pub a: Vec<f64>,
}

impl Block {
    pub fn zeros(n: usize) -> Block {
        Block {
            n,
            a: vec![0.0; n * n],
        }
    }

    pub fn at(&self, i: usize, j: usize) -> f64 {
        self.a[i * self.n + j]
    }

    pub fn set(&mut self, i: usize, j: usize, v: f64) {
        self.a[i * self.n + j] = v;
    }

    pub fn transposed(&self) -> Block {
        let mut t = Block::zeros(self.n);
        for i in 0..self.n {
            for j in 0..self.n {
                t.set(j, i, self.at(i, j));
            }
        }
        t
    }

    /// `self * x` for a column vector.
    pub fn mul_vec(&self, x: &[f64]) -> Vec<f64> {
        (0..self.n)
            .map(|i| (0..self.n).map(|j| self.at(i, j) * x[j]).sum())
            .collect()
    }

    /// `x * self` for a row vector.
    pub fn vec_mul(&self, x: &[f64]) -> Vec<f64> {
        let mut y = vec![0.0; self.n];
        for (i, xi) in x.iter().enumerate() {
            for (j, yj) in y.iter_mut().enumerate() {
                *yj += xi * self.at(i, j);
            }
        }
        y
    }

    /// `self * m`.
    fn mul(&self, m: &Block) -> Block {
        let n = self.n;
        let mut p = Block::zeros(n);
        for i in 0..n {
            for k in 0..n {
                let aik = self.at(i, k);
                if aik == 0.0 {
                    continue;
                }
                axpy(&mut p.a[i * n..(i + 1) * n], aik, &m.a[k * n..(k + 1) * n]);
            }
        }
        p
    }

    fn minus(&self, m: &Block) -> Block {
        Block {
            n: self.n,
            a: self.a.iter().zip(&m.a).map(|(x, y)| x - y).collect(),
        }
    }
}

/// A block's LU factors with partial pivoting.
#[derive(Clone, Debug)]
struct Lu {
    lu: Block,
    pivot: Vec<usize>,
}

/// A block that is singular to working precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Singular;

impl Lu {
    fn of(b: &Block) -> Result<Lu, Singular> {
        let n = b.n;
        let mut lu = b.clone();
        let mut pivot: Vec<usize> = (0..n).collect();
        let scale =
            b.a.iter()
                .fold(0.0f64, |m, x| m.max(x.abs()))
                .max(f64::MIN_POSITIVE);
        for k in 0..n {
            let p = (k..n)
                .max_by(|&i, &j| lu.at(i, k).abs().total_cmp(&lu.at(j, k).abs()))
                .unwrap_or(k);
            if lu.at(p, k).abs() <= scale * 1e-300 {
                return Err(Singular);
            }
            if p != k {
                for j in 0..n {
                    lu.a.swap(k * n + j, p * n + j);
                }
                pivot.swap(k, p);
            }
            let d = lu.at(k, k);
            let (upto, rest) = lu.a.split_at_mut((k + 1) * n);
            let pivot_row = &upto[k * n + k + 1..];
            for i in k + 1..n {
                let row = &mut rest[(i - k - 1) * n..(i - k) * n];
                let f = row[k] / d;
                row[k] = f;
                if f != 0.0 {
                    axpy(&mut row[k + 1..], -f, pivot_row);
                }
            }
        }
        Ok(Lu { lu, pivot })
    }

    /// `x` with `B x = b`.
    fn solve(&self, b: &[f64]) -> Vec<f64> {
        let n = self.lu.n;
        let mut x: Vec<f64> = self.pivot.iter().map(|&p| b[p]).collect();
        for i in 0..n {
            for j in 0..i {
                x[i] -= self.lu.at(i, j) * x[j];
            }
        }
        for i in (0..n).rev() {
            for j in i + 1..n {
                x[i] -= self.lu.at(i, j) * x[j];
            }
            x[i] /= self.lu.at(i, i);
        }
        x
    }

    /// `x` with `x B = b` (row vectors).
    fn solve_row(&self, b: &[f64]) -> Vec<f64> {
        let n = self.lu.n;
        // B = P^T L U, so x P^T L U = b: solve U^T, then L^T, then undo the permutation.
        let mut y = b.to_vec();
        for i in 0..n {
            for j in 0..i {
                y[i] -= self.lu.at(j, i) * y[j];
            }
            y[i] /= self.lu.at(i, i);
        }
        for i in (0..n).rev() {
            for j in i + 1..n {
                y[i] -= self.lu.at(j, i) * y[j];
            }
        }
        let mut x = vec![0.0; n];
        for (k, &p) in self.pivot.iter().enumerate() {
            x[p] = y[k];
        }
        x
    }

    /// `B^-1 m`: the permuted rows of `m` eliminated as whole rows (contiguous, so the inner
    /// loops vectorise).
    fn solve_block(&self, m: &Block) -> Block {
        let n = m.n;
        let mut x = Block::zeros(n);
        for (i, &p) in self.pivot.iter().enumerate() {
            x.a[i * n..(i + 1) * n].copy_from_slice(&m.a[p * n..(p + 1) * n]);
        }
        for i in 1..n {
            let (done, rest) = x.a.split_at_mut(i * n);
            let row = &mut rest[..n];
            for j in 0..i {
                let f = self.lu.a[i * n + j];
                if f != 0.0 {
                    axpy(row, -f, &done[j * n..(j + 1) * n]);
                }
            }
        }
        for i in (0..n).rev() {
            let (head, below) = x.a.split_at_mut((i + 1) * n);
            let row = &mut head[i * n..];
            for j in i + 1..n {
                let f = self.lu.a[i * n + j];
                if f != 0.0 {
                    axpy(row, -f, &below[(j - i - 1) * n..(j - i) * n]);
                }
            }
            let d = self.lu.a[i * n + i];
            row.iter_mut().for_each(|v| *v /= d);
        }
        x
    }
}

/// `y += f x`.
fn axpy(y: &mut [f64], f: f64, x: &[f64]) {
    for (a, b) in y.iter_mut().zip(x) {
        *a += f * b;
    }
}

/// A block-tridiagonal matrix: `diag[n]` at (n, n), `upper[n]` at (n, n + 1), `lower[n]` at
/// (n + 1, n).
#[derive(Clone, Debug)]
pub struct Tridiagonal {
    pub diag: Vec<Block>,
    pub upper: Vec<Block>,
    pub lower: Vec<Block>,
}

impl Tridiagonal {
    /// `x` with `M x = b`, `b` and `x` one vector per level.
    pub fn solve(&self, b: &[Vec<f64>]) -> Result<Vec<Vec<f64>>, Singular> {
        let levels = self.diag.len();
        let mut factors: Vec<Lu> = Vec::with_capacity(levels);
        let mut y: Vec<Vec<f64>> = Vec::with_capacity(levels);
        // Forward: S_n = D_n - L_{n-1} S_{n-1}^-1 U_{n-1}, y_n = b_n - L_{n-1} S_{n-1}^-1 y_{n-1}.
        for n in 0..levels {
            let (s, yn) = if n == 0 {
                (self.diag[0].clone(), b[0].clone())
            } else {
                let prev = &factors[n - 1];
                let l = &self.lower[n - 1];
                let s = self.diag[n].minus(&l.mul(&prev.solve_block(&self.upper[n - 1])));
                let carried = l.mul_vec(&prev.solve(&y[n - 1]));
                let yn = b[n].iter().zip(&carried).map(|(a, c)| a - c).collect();
                (s, yn)
            };
            factors.push(Lu::of(&s)?);
            y.push(yn);
        }
        // Back: x_n = S_n^-1 (y_n - U_n x_{n+1}).
        let mut x = vec![Vec::new(); levels];
        for n in (0..levels).rev() {
            let mut rhs = y[n].clone();
            if n + 1 < levels {
                let above = self.upper[n].mul_vec(&x[n + 1]);
                rhs.iter_mut().zip(&above).for_each(|(r, a)| *r -= a);
            }
            x[n] = factors[n].solve(&rhs);
        }
        Ok(x)
    }

    /// The transpose: `x` with `M^T x = b` is the solve of this.
    pub fn transposed(&self) -> Tridiagonal {
        Tridiagonal {
            diag: self.diag.iter().map(Block::transposed).collect(),
            upper: self.lower.iter().map(Block::transposed).collect(),
            lower: self.upper.iter().map(Block::transposed).collect(),
        }
    }

    /// The stationary distribution `pi` of a generator with this block structure (`pi M = 0`,
    /// summing to 1), by linear level reduction: `S_0 = D_0`, `S_n = D_n - L_{n-1} S_{n-1}^-1
    /// U_{n-1}` (each level censored onto the ones above), `pi_top S_top = 0`, then `pi_{n-1} =
    /// -pi_n L_{n-1} S_{n-1}^-1` down to level 0.
    pub fn stationary(&self) -> Result<Vec<Vec<f64>>, Singular> {
        let levels = self.diag.len();
        let mut factors: Vec<Lu> = Vec::with_capacity(levels);
        let mut top = self.diag[0].clone();
        for n in 0..levels {
            if n > 0 {
                let prev = &factors[n - 1];
                top = self.diag[n]
                    .minus(&self.lower[n - 1].mul(&prev.solve_block(&self.upper[n - 1])));
            }
            if n + 1 < levels {
                factors.push(Lu::of(&top)?);
            }
        }
        // pi_top S = 0 with pi_top summing to 1: the last column of S replaced by ones.
        let p = top.n;
        let mut s = top;
        for i in 0..p {
            s.set(i, p - 1, 1.0);
        }
        let mut unit = vec![0.0; p];
        unit[p - 1] = 1.0;
        let mut pi = vec![Vec::new(); levels];
        pi[levels - 1] = Lu::of(&s)?.solve_row(&unit);
        for n in (1..levels).rev() {
            let flow = self.lower[n - 1].vec_mul(&pi[n]);
            let below = factors[n - 1].solve_row(&flow);
            pi[n - 1] = below.into_iter().map(|v| -v).collect();
        }
        let total: f64 = pi.iter().flatten().map(|v| v.max(0.0)).sum();
        for level in &mut pi {
            level.iter_mut().for_each(|v| *v = v.max(0.0) / total);
        }
        Ok(pi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(n: usize, rows: &[&[f64]]) -> Block {
        Block {
            n,
            a: rows.iter().flat_map(|r| r.iter().copied()).collect(),
        }
    }

    /// The same matrix dense, for checking.
    fn dense(m: &Tridiagonal) -> Vec<Vec<f64>> {
        let (levels, p) = (m.diag.len(), m.diag[0].n);
        let mut d = vec![vec![0.0; levels * p]; levels * p];
        let mut put = |bi: usize, bj: usize, b: &Block| {
            for i in 0..p {
                for j in 0..p {
                    d[bi * p + i][bj * p + j] = b.at(i, j);
                }
            }
        };
        for n in 0..levels {
            put(n, n, &m.diag[n]);
            if n + 1 < levels {
                put(n, n + 1, &m.upper[n]);
                put(n + 1, n, &m.lower[n]);
            }
        }
        d
    }

    fn sample() -> Tridiagonal {
        Tridiagonal {
            diag: vec![
                block(2, &[&[0.0, 4.0], &[3.0, 1.0]]),
                block(2, &[&[5.0, -1.0], &[2.0, 6.0]]),
                block(2, &[&[7.0, 2.0], &[-1.0, 4.0]]),
            ],
            upper: vec![
                block(2, &[&[1.0, 0.0], &[0.5, 1.0]]),
                block(2, &[&[0.0, 1.0], &[1.0, 0.0]]),
            ],
            lower: vec![
                block(2, &[&[1.0, 2.0], &[0.0, 1.0]]),
                block(2, &[&[0.5, 0.0], &[0.0, 0.5]]),
            ],
        }
    }

    #[test]
    fn solve_and_transposed_solve_satisfy_the_dense_system() {
        let m = sample();
        let b = vec![vec![1.0, -2.0], vec![0.5, 3.0], vec![-1.0, 2.0]];
        let flat_b: Vec<f64> = b.iter().flatten().copied().collect();
        for (mat, d) in [
            (m.clone(), dense(&m)),
            (m.transposed(), dense(&m.transposed())),
        ] {
            let x: Vec<f64> = mat.solve(&b).unwrap().into_iter().flatten().collect();
            for (row, bi) in d.iter().zip(&flat_b) {
                let r: f64 = row.iter().zip(&x).map(|(a, xi)| a * xi).sum();
                assert!((r - bi).abs() < 1e-12, "{r} != {bi}");
            }
        }
        // The first diagonal block needs a row swap: pivoting is exercised.
        assert_eq!(Lu::of(&m.diag[0]).unwrap().pivot, vec![1, 0]);
    }

    #[test]
    fn a_singular_block_is_refused() {
        let m = Tridiagonal {
            diag: vec![block(2, &[&[1.0, 2.0], &[2.0, 4.0]])],
            upper: Vec::new(),
            lower: Vec::new(),
        };
        assert_eq!(m.solve(&[vec![1.0, 1.0]]), Err(Singular));
    }

    #[test]
    fn stationary_distribution_of_a_birth_death_chain_in_two_phases() {
        // Levels 0..=3, two phases that switch at rate 1 both ways; up at 2, down at 3 in
        // either phase: levels are independent of the phase, pi(level) = (2/3)^n normalised,
        // each phase half of it.
        let (up, down, switch) = (2.0, 3.0, 1.0);
        let levels = 4;
        let mut diag = Vec::new();
        for n in 0..levels {
            let out =
                switch + if n + 1 < levels { up } else { 0.0 } + if n > 0 { down } else { 0.0 };
            diag.push(block(2, &[&[-out, switch], &[switch, -out]]));
        }
        let m = Tridiagonal {
            diag,
            upper: vec![block(2, &[&[up, 0.0], &[0.0, up]]); levels - 1],
            lower: vec![block(2, &[&[down, 0.0], &[0.0, down]]); levels - 1],
        };
        let pi = m.stationary().unwrap();
        let weights: Vec<f64> = (0..levels).map(|n| (up / down).powi(n as i32)).collect();
        let total: f64 = weights.iter().sum();
        for (n, level) in pi.iter().enumerate() {
            for (phase, p) in level.iter().enumerate() {
                let want = weights[n] / total / 2.0;
                assert!((p - want).abs() < 1e-12, "{n} {phase}");
            }
        }
    }
}
