package com.example.a;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

/** Same simple name and method names as com.example.b.CalcTest, other outcomes. */
public class CalcTest {
    @Test
    public void add() {
        assertEquals(3, 1 + 2);
    }

    @Test
    public void divide() {
        assertEquals(4, 7 / 2); // fails here, passes in com.example.b
    }
}
